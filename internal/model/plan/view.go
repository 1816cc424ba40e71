package plan

import "encoding/json"

// OpView runs a catalog view (Plasm's views:): its steps call read
// capabilities in order and its outputs fill the one row the node yields.
// Node.Args (and ArgRefs) hold the view's scope values.
const OpView = "view"

// MaterializeView is the Hop.Materialize of a relation a view outputs: its
// rows are those the view selected from one of its steps (no call).
const MaterializeView = "view_output"

// View is an OpView node's composition, self-contained like every node:
// the executor needs no catalog to run it.
type View struct {
	Name string `json:"name"`
	// Required are the scope values a run must have (Plasm's
	// scope[].required), checked before the first call.
	Required  []string       `json:"required,omitempty"`
	Steps     []ViewStep     `json:"steps"`
	Outputs   []ViewOutput   `json:"outputs,omitempty"`
	Relations []ViewRelation `json:"relations,omitempty"`
}

// ViewStep is one capability call of a view.
type ViewStep struct {
	ID         string   `json:"id"`
	Capability string   `json:"capability"`
	Kind       string   `json:"kind"` // get, singleton, query or search
	Entity     string   `json:"entity"`
	Columns    []string `json:"columns,omitempty"`
	// Binds fill the call's variables; a bind whose Filter is set instead
	// keeps only the rows whose field Var equals the value (the parameter
	// is not one of the capability's).
	Binds []ViewBind `json:"binds,omitempty"`
	// IDFrom, on a get, is the bind holding the row id; IDVars are the
	// variables that receive it ("id", and the id field when the mapping
	// names it).
	IDFrom string   `json:"id_from,omitempty"`
	IDVars []string `json:"id_vars,omitempty"`
}

// ViewBind kinds are the catalog's: scope, literal, node_field, computed.
type ViewBind struct {
	Var      string `json:"var"`
	Kind     string `json:"kind"`
	From     string `json:"from,omitempty"`
	Node     string `json:"node,omitempty"`
	Field    string `json:"field,omitempty"`
	Value    any    `json:"value,omitempty"`
	Template string `json:"template,omitempty"`
	Filter   bool   `json:"filter,omitempty"`
}

// ViewOutput fills one field of the view's row (kinds as in the catalog).
type ViewOutput struct {
	Field    string `json:"field"`
	Kind     string `json:"kind"`
	Param    string `json:"param,omitempty"`
	Node     string `json:"node,omitempty"`
	Of       string `json:"of,omitempty"`
	Equals   any    `json:"equals,omitempty"`
	Template string `json:"template,omitempty"`
}

// ViewRelation selects the rows of step Node that relation Relation of the
// view's row leads to.
type ViewRelation struct {
	Relation string   `json:"relation"`
	Kind     string   `json:"kind"`
	Node     string   `json:"node"`
	Where    string   `json:"where,omitempty"`
	Equals   any      `json:"equals,omitempty"`
	Columns  []string `json:"columns,omitempty"` // the target's fields
}

// appendJSON appends `,"view":…` for a view node. Views are rare and small,
// so encoding/json (which AppendJSON must match byte for byte) does it.
func (v *View) appendJSON(b []byte) []byte {
	if v == nil {
		return b
	}
	j, err := json.Marshal(v)
	if err != nil {
		return b // unreachable: a View holds only JSON values
	}
	return append(append(b, `,"view":`...), j...)
}

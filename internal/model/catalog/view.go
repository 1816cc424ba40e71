package catalog

// View binding kinds (Plasm's views:). A view is a composed read: its
// nodes call other read capabilities in order, each node's parameters bound
// from the view's scope, a literal, a field of an earlier node's first row,
// or a template over those; its output fills one row of the view's entity.
const (
	// Node parameter binds (and the output kinds shared with them).
	ViewScope    = "scope"   // the scope value Param
	ViewLiteral  = "literal" // Value, as written
	ViewField    = "node_field"
	ViewComputed = "computed" // Template rendered over scope and earlier values

	// Output kinds.
	ViewRowCount         = "node_row_count"
	ViewRowCountPositive = "node_row_count_positive"
	ViewHistogram        = "node_field_histogram_json"
	ViewAnyRowEquals     = "node_any_row_field_equals"

	// Relation output bindings.
	ViewFirstRowWhere = "first_node_row_where"
	ViewRowsWhere     = "node_rows_where"
	ViewAllRows       = "node_all_rows"
	ViewSingleRow     = "node_single_row"
)

// View is a Plasm composed read served by the capabilities whose mapping
// says transport: view.
type View struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Capability  string `json:"capability"`
	Entity      string `json:"entity"`
	// Serves lists the capabilities whose mapping names this view
	// (typically a query by scope and a get by the row's id).
	Serves []string `json:"serves,omitempty"`
	// Scope are the values one invocation supplies: the query's
	// predicates, or the id of a get.
	Scope     []ViewScopeParam     `json:"scope,omitempty"`
	Nodes     []ViewNode           `json:"nodes"`
	Output    []ViewOutput         `json:"output,omitempty"`
	Relations []ViewRelationOutput `json:"relation_outputs,omitempty"`
}

// ViewScopeParam is one declared scope value. Inject names a session
// value the host supplies when the program does not (Plasm's
// session_ui_origin / session_transport_origin).
type ViewScopeParam struct {
	Name     string `json:"name"`
	ValueRef string `json:"value_ref,omitempty"`
	Required bool   `json:"required,omitempty"`
	Inject   string `json:"inject,omitempty"`
}

// ViewNode is one capability call of a view.
type ViewNode struct {
	ID         string     `json:"id"`
	Capability string     `json:"capability"`
	Bind       []ViewBind `json:"bind,omitempty"`
}

// ViewBind fills parameter Param of a node's capability.
type ViewBind struct {
	Param    string `json:"param"`
	Kind     string `json:"kind"`
	From     string `json:"from,omitempty"`  // scope: the scope value's name
	Node     string `json:"node,omitempty"`  // node_field
	Field    string `json:"field,omitempty"` // node_field
	Value    any    `json:"value,omitempty"` // literal
	Template string `json:"template,omitempty"`
}

// ViewOutput fills field Field of the view's row.
type ViewOutput struct {
	Field    string `json:"field"`
	Kind     string `json:"kind"`
	Param    string `json:"param,omitempty"` // scope
	Node     string `json:"node,omitempty"`
	Of       string `json:"of,omitempty"` // the node's field read
	Equals   any    `json:"equals,omitempty"`
	Template string `json:"template,omitempty"`
}

// ViewRelationOutput makes rows of a node the targets of a relation of the
// view's entity: follow it from a view row to get them.
type ViewRelationOutput struct {
	Relation    string `json:"relation"`
	Target      string `json:"target"`
	Cardinality string `json:"cardinality"`
	Kind        string `json:"kind"`
	Node        string `json:"node"`
	Where       string `json:"where_field,omitempty"`
	Equals      any    `json:"equals,omitempty"`
}

// ViewServing returns the view a capability runs, or nil when it is not
// served by a view.
func (c *Catalog) ViewServing(capability string) *View {
	for _, v := range c.Views {
		for _, s := range v.Serves {
			if s == capability {
				return v
			}
		}
	}
	return nil
}

// ViewRelation returns the view relation output named relation of entity,
// or nil: such relations are followed through the view's rows. The loader
// refuses two views outputting one relation; should a catalog built
// otherwise have them, the view first by name wins, never a random one.
func (c *Catalog) ViewRelation(entity, relation string) (*View, *ViewRelationOutput) {
	var best *View
	var out *ViewRelationOutput
	for _, v := range c.Views {
		if v.Entity != entity || best != nil && v.Name >= best.Name {
			continue
		}
		for i := range v.Relations {
			if v.Relations[i].Relation == relation {
				best, out = v, &v.Relations[i]
				break
			}
		}
	}
	return best, out
}

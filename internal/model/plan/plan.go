// Package plan defines the plan the engine produces from a program and the
// host executes: a DAG of nodes, each self-contained (capability names,
// variables, relation bindings), so the executor needs no catalog semantics.
package plan

// Node operations.
const (
	OpFetch     = "fetch"     // call a read capability (get/query/search)
	OpHop       = "hop"       // follow a relation from Input's rows
	OpMutate    = "mutate"    // create/update/delete/action
	OpTransform = "transform" // postfix transforms over Input's rows
	OpPage      = "page"      // continue a paginated list from a handle
	// OpHydrate reads each of Input's rows again through the entity's get
	// and fills the fields the list capability did not provide.
	OpHydrate = "hydrate"
)

// Effects.
const (
	EffectRead  = "read"
	EffectWrite = "write"
)

// Verdicts.
const (
	VerdictOK     = "ok"
	VerdictReview = "review"
)

// Plan is the engine's answer to a program.
type Plan struct {
	Nodes   []Node   `json:"nodes"`
	Roots   []Root   `json:"roots"`
	Order   []int    `json:"order"` // topological order of node ids
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons,omitempty"`
	Summary string   `json:"summary"`
}

// Root is one returned result.
type Root struct {
	Label string `json:"label"`
	Node  int    `json:"node"`
}

// Node is one step. Node IDs equal their index in Plan.Nodes.
type Node struct {
	ID     int    `json:"id"`
	Op     string `json:"op"`
	Kind   string `json:"kind,omitempty"` // capability kind, or "relation"
	Effect string `json:"effect"`
	Label  string `json:"label,omitempty"` // binding label, when bound

	EntryID    string `json:"entry_id,omitempty"`
	Entity     string `json:"entity,omitempty"` // entity of the rows this node yields
	Capability string `json:"capability,omitempty"`
	// Columns are the entity's fields in declaration order (the row shape).
	Columns []string `json:"columns,omitempty"`

	// Args are literal capability variables (CML environment).
	Args map[string]any `json:"args,omitempty"`
	// ArgRefs fill variables from an earlier node's single row.
	ArgRefs []ArgRef `json:"arg_refs,omitempty"`

	// Input is the upstream node (hop parents, transform input, mutation
	// receivers), or -1.
	Input int `json:"input"`
	// ForEach, on a mutation with Input, runs it once per input row with
	// Args[ForEach.Var] = row[ForEach.Field].
	ForEach *Bind `json:"for_each,omitempty"`
	// EachRow, on a mutation with Input, runs it once per input row with
	// variables taken from that row (a for-each effect, label => …).
	EachRow *EachRow `json:"each_row,omitempty"`
	// Semi keeps only the input rows whose Field value is among the Key
	// values of node Semi.Node's rows (a predicate on a related entity).
	Semi *SemiJoin `json:"semi,omitempty"`
	// PageSize, on a list fetch, cuts each answer to at most this many
	// rows, continuing the rest through the page handle (.page_size(n)).
	PageSize int `json:"page_size,omitempty"`
	// Templates fill variables with text interpolated from earlier rows
	// (`"… ${label.field} …"` in a method argument).
	Templates []ArgTemplate `json:"templates,omitempty"`

	Hop *Hop `json:"hop,omitempty"`
	// Hydrate, on an OpHydrate node, says which get fills which fields.
	Hydrate *Hydrate `json:"hydrate,omitempty"`
	// View, on an OpView node, is the composition it runs (view.go).
	View *View `json:"view,omitempty"`

	// Filters are predicates not pushed down to the backend, applied by the
	// host after fetching.
	Filters []Pred `json:"filters,omitempty"`
	// Transforms apply in order after Filters.
	Transforms []Transform `json:"transforms,omitempty"`

	// Page continues a handle (OpPage).
	Page *PageRef `json:"page,omitempty"`

	Many   bool  `json:"many"` // result is a list (else at most one row)
	Deps   []int `json:"deps,omitempty"`
	Line   int   `json:"line,omitempty"`
	Column int   `json:"column,omitempty"`
}

// ArgRef binds variable Var to Field of the single row of node Node.
type ArgRef struct {
	Var   string `json:"var"`
	Node  int    `json:"node"`
	Field string `json:"field"`
}

// Bind maps a capability variable to a field of an input row.
type Bind struct {
	Var   string `json:"var"`
	Field string `json:"field"`
}

// Hop says how to obtain a relation's rows for each parent row.
type Hop struct {
	Relation    string `json:"relation"`
	Materialize string `json:"materialize"` // catalog.FromParentGet | QueryScoped | QueryScopedBindings
	Target      string `json:"target"`
	// Capability is run once per parent row: the target query for
	// query_scoped, the parent's get for from_parent_get.
	Capability string `json:"capability"`
	// Binds fill the capability's variables from the parent row.
	Binds []Bind `json:"binds"`
	// DistinctBy, when set, is the target's id field: the relation is
	// cardinality one, so parents sharing a target yield it once (first
	// occurrence order) rather than once per parent.
	DistinctBy string `json:"distinct_by,omitempty"`
}

// Hydrate says how an OpHydrate node completes its input rows: Node.Capability
// (the entity's get) runs once per row with Binds filled from that row, and
// the answer's Fields are copied into the row in place. Rows that already
// carry every one of Fields are not read again.
type Hydrate struct {
	Binds  []Bind   `json:"binds"`
	Fields []string `json:"fields"`
}

// Pred is a row predicate.
type Pred struct {
	Field string `json:"field"`
	Op    string `json:"op"` // = != > < >= <= ~
	Value any    `json:"value"`
}

// Transform kinds.
const (
	TLimit   = "limit"
	TSort    = "sort"
	TProject = "project"
	TFilter  = "filter"
)

// Transform is one postfix step.
type Transform struct {
	Kind   string   `json:"kind"`
	N      int      `json:"n,omitempty"`
	Field  string   `json:"field,omitempty"`
	Desc   bool     `json:"desc,omitempty"`
	Fields []string `json:"fields,omitempty"`
	Preds  []Pred   `json:"preds,omitempty"`
	// Aggs are the aggregates of TAggregate and TGroupBy.
	Aggs []Agg `json:"aggs,omitempty"`
	// Derive are the output columns of TDerive.
	Derive []Derived `json:"derive,omitempty"`
	// Template is TRender's template text.
	Template string `json:"template,omitempty"`
}

// PageRef names a continuation handle such as s0_pg3.
type PageRef struct {
	Handle string `json:"handle"`
	Limit  int    `json:"limit,omitempty"`
}

package lang

// The AST keeps a position on every node so that the checker can report
// errors exactly where the agent wrote the offending text.

// name is an identifier as written, possibly qualified (entry:Entity).
type name struct {
	p    pos
	text string // wire name after symbol expansion
	raw  string // as written
	qual string // entry qualifier, "" when unqualified
	sym  *symRef
}

// line is one statement: a binding (label set) or the roots line.
type line struct {
	p     pos
	label *name
	rhs   []*rhs
}

type rhsKind uint8

const (
	rhsExpr rhsKind = iota
	rhsDerive
	rhsEffect
	rhsPage
	rhsWait
	rhsCancel
	rhsText // a string or heredoc bound on its own: one row {content}
)

// rhs is a right-hand side: an expression chain, a continuation, or a
// derive/effect over a label.
type rhs struct {
	p          pos
	start, end int // byte range in the program (for root labels)
	kind       rhsKind

	src    *source
	steps  []*step
	render *pos // position of a trailing <<TAG render
	tmpl   string
	text   *value // rhsText

	handle   *name // page/wait/cancel
	limit    int
	hasLimit bool
	limitPos pos

	arrow  pos // derive/effect
	over   *name
	derive []arg
	effect *rhs
}

type srcForm uint8

const (
	srcAll srcForm = iota
	srcGet
	srcKeys
	srcQuery
	srcSearch
)

// source is the head of a chain: an entity read or a label.
type source struct {
	p      pos
	name   name
	form   srcForm
	id     *value
	keys   []arg
	preds  []pred
	phrase *value
}

type stepKind uint8

const (
	stRel stepKind = iota
	stCall
	stLimit
	stSort
	stFilter
	stProject
	stPageSize
	stAggregate
	stGroupBy
	stDedupe
	stSingleton
	stReverse // .^Entity{…}
)

var stepNames = map[stepKind]string{
	stLimit: "limit", stSort: "sort", stFilter: "filter", stPageSize: "page_size",
	stAggregate: "aggregate", stGroupBy: "group_by", stDedupe: "dedupe", stSingleton: "singleton",
}

type step struct {
	p      pos
	kind   stepKind
	name   name // relation or method (or the postfix keyword)
	args   []arg
	n      int
	nPos   pos
	field  *name
	desc   bool
	preds  []pred
	fields []name
	specs  []spec
}

type arg struct {
	key name
	val *value
}

type pred struct {
	p     pos
	field name
	op    string
	val   *value
	// foreign, when set, makes this `Foreign.field op value`: a predicate
	// on the entity a reference field of the queried entity points at.
	foreign *name
}

// spec is one aggregate: name = count | fn(field).
type spec struct {
	name  name
	fn    string
	field *name
}

type valKind uint8

const (
	vLit valKind = iota
	vList
	vIdent      // a label reference (with optional field) or a bare word
	vEntity     // Entity(…) used as a value
	vUnderscore // _.field inside derive/effect
	vUnion      // v#{k=v, …}: a union constructor as a method's sole argument
)

type value struct {
	p     pos
	end   pos // after the value, for phrase spans
	kind  valKind
	lit   any
	list  []*value
	ident name
	field *name
	get   *source
	union []arg
}

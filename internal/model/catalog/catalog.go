// Package catalog holds the catalog model shared by the host and the guest:
// values, entities, fields, relations, capabilities and their wire mappings.
//
// The host parses catalog directories into these types (runtime/catalogdir)
// and ships them to the guest as JSON once per instance; the guest plans,
// compiles requests and decodes responses from the same structs. Nothing in
// this package does I/O, so it builds for wasip1 and natively alike.
package catalog

// Catalog is one registry entry: a domain (semantics) plus its mappings (wire).
type Catalog struct {
	EntryID         string                 `json:"entry_id"`
	Version         int                    `json:"version"`
	Description     string                 `json:"description,omitempty"`
	HTTPBackend     string                 `json:"http_backend,omitempty"`
	Auth            Auth                   `json:"auth"`
	RegistryAliases []string               `json:"registry_aliases,omitempty"`
	Values          map[string]*Value      `json:"values,omitempty"`
	Entities        map[string]*Entity     `json:"entities"`
	Capabilities    map[string]*Capability `json:"capabilities"`
	Mappings        map[string]*Mapping    `json:"mappings"`
	Module          *Module                `json:"module,omitempty"`
	// Views are Plasm's composed read capabilities (see plasm.go).
	Views map[string]*View `json:"views,omitempty"`
	// OAuth is Plasm's oauth: block (provider and scope sets), kept for
	// documentation and checks; plasmd never runs an interactive flow.
	OAuth *OAuth `json:"oauth,omitempty"`
	// Digest is the sha256 (hex) of the catalog's source files, set by the loader.
	Digest string `json:"digest,omitempty"`

	// idx answers name lookups and CapabilitiesOf once the catalog is
	// frozen (names.go).
	idx *catIndex
}

// Value is a named value domain.
type Value struct {
	Type            string   `json:"type"` // string uuid integer number boolean select multi_select date array entity_ref blob
	Target          string   `json:"target,omitempty"`
	AllowedValues   []string `json:"allowed_values,omitempty"`
	ValueFormat     string   `json:"value_format,omitempty"`
	StringSemantics string   `json:"string_semantics,omitempty"`
	ItemsRef        string   `json:"items_ref,omitempty"`
	Description     string   `json:"description,omitempty"`
}

// Entity is a row type of the API.
type Entity struct {
	Name        string               `json:"name"`
	IDField     string               `json:"id_field,omitempty"`
	KeyVars     []string             `json:"key_vars,omitempty"`
	Description string               `json:"description,omitempty"`
	Fields      map[string]*Field    `json:"fields"`
	FieldOrder  []string             `json:"field_order"` // declaration order
	Relations   map[string]*Relation `json:"relations,omitempty"`
	RelOrder    []string             `json:"relation_order,omitempty"`
	Abstract    bool                 `json:"abstract,omitempty"`
	PrimaryRead string               `json:"primary_read,omitempty"`
	// IDFrom is the wire path of the row identity when it is not a
	// top-level field (Plasm's id_from); IDField then names the id.
	IDFrom []string `json:"id_from,omitempty"`
	// Aliases are other names programs may use for the entity.
	Aliases []string `json:"expression_aliases,omitempty"`
	// Implicit marks an entity read without any id (Plasm's
	// implicit_request_identity: the request itself is the identity).
	Implicit bool `json:"implicit_request_identity,omitempty"`

	// idx answers FieldNamed and RelationNamed once the catalog is frozen.
	idx *entIndex
}

// Field is one attribute of an entity.
type Field struct {
	Name        string   `json:"name"`
	ValueRef    string   `json:"value_ref"`
	Required    bool     `json:"required,omitempty"`
	Description string   `json:"description,omitempty"`
	Path        []string `json:"path,omitempty"` // JSON path in the wire object; nil means [Name]
	// Derive computes the value from the JSON at Path (see plasm.go).
	Derive *Derive `json:"derive,omitempty"`
	// WholeRow makes Derive read the whole wire row (Plasm's path: []).
	WholeRow bool `json:"whole_row,omitempty"`
	// Presentation is Plasm's agent_presentation hint (default, reference_only, …).
	Presentation string `json:"agent_presentation,omitempty"`
}

// Relation kinds of materialisation.
const (
	FromParentGet       = "from_parent_get"
	QueryScoped         = "query_scoped"
	QueryScopedBindings = "query_scoped_bindings"
	GetScopedBindings   = "get_scoped_bindings"
)

// Relation navigates from an entity to another.
type Relation struct {
	Name        string `json:"name"`
	Target      string `json:"target"`
	Cardinality string `json:"cardinality"` // one | many
	Description string `json:"description,omitempty"`
	// Materialize.Kind is empty for a relation declared without one: it is
	// described but not traversable (Plasm's "unavailable").
	Materialize Materialize `json:"materialize"`
}

// Materialize says how a relation's rows are obtained.
type Materialize struct {
	Kind       string            `json:"kind"`
	Path       []PathStep        `json:"path,omitempty"`       // from_parent_get
	Capability string            `json:"capability,omitempty"` // query_scoped*
	Param      string            `json:"param,omitempty"`      // query_scoped
	Bindings   map[string]string `json:"bindings,omitempty"`   // *_scoped_bindings: param -> parent field
}

// PathStep is one step into the parent's wire object: a key or a wildcard over an array.
type PathStep struct {
	Key      string `json:"key,omitempty"`
	Wildcard bool   `json:"wildcard,omitempty"`
}

// Capability kinds.
const (
	KindQuery  = "query"
	KindSearch = "search"
	KindGet    = "get"
	KindCreate = "create"
	KindUpdate = "update"
	KindDelete = "delete"
	KindAction = "action"
	// KindSingleton reads the one row of an entity that has no id
	// (the current user, account settings).
	KindSingleton = "singleton"
)

// Capability is one operation on an entity.
type Capability struct {
	Name        string      `json:"name"`
	Kind        string      `json:"kind"`
	Entity      string      `json:"entity"`
	Description string      `json:"description,omitempty"`
	Parameters  []Parameter `json:"parameters,omitempty"`
	Provides    []string    `json:"provides,omitempty"`
	Output      *Output     `json:"output,omitempty"`
	// OpenInput accepts input fields beyond Parameters (Plasm's
	// input_schema with additional_fields: true).
	OpenInput bool `json:"open_input,omitempty"`
	// Preflight are steps run before the call (see plasm.go).
	Preflight []PreflightStep `json:"preflight,omitempty"`
	// ScopeAggregateKeyPolicy is Plasm's policy for compound scope keys.
	ScopeAggregateKeyPolicy string `json:"scope_aggregate_key_policy,omitempty"`
	// Unavailable, when set, is why plasmd cannot execute this capability
	// (a view, an EVM transport, a preflight…). It is loaded and checked,
	// shown by catalog check, and left out of teaching and planning.
	Unavailable string `json:"unavailable,omitempty"`
}

// Parameter roles.
const (
	RoleFilter          = "filter"
	RoleSearch          = "search"
	RoleSort            = "sort"
	RoleSortDirection   = "sort_direction"
	RoleResponseControl = "response_control"
	RoleScope           = "scope"
)

// Parameter is one input of a capability.
type Parameter struct {
	Name        string `json:"name"`
	ValueRef    string `json:"value_ref"`
	Required    bool   `json:"required,omitempty"`
	Role        string `json:"role,omitempty"` // empty means filter
	Description string `json:"description,omitempty"`
}

// Output describes a capability that returns no rows.
type Output struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// Auth is how requests authenticate. Secret names (Env, ClientIDEnv, …) are
// resolved by the host only; the guest never sees a secret value.
type Auth struct {
	Scheme          string   `json:"scheme"` // none api_key_header api_key_query bearer_token oauth_bearer oauth2_client_credentials
	Header          string   `json:"header,omitempty"`
	Param           string   `json:"param,omitempty"`
	Env             string   `json:"env,omitempty"`
	TokenURL        string   `json:"token_url,omitempty"`
	ClientIDEnv     string   `json:"client_id_env,omitempty"`
	ClientSecretEnv string   `json:"client_secret_env,omitempty"`
	Scopes          []string `json:"scopes,omitempty"`
	// OptionalEnv lets a bearer scheme run without a secret (a public
	// endpoint that accepts an optional token).
	OptionalEnv bool `json:"optional_env,omitempty"`
}

// Module pins a vendor Wasm module shipped with the catalog.
type Module struct {
	SHA256 string   `json:"sha256"`
	Hooks  []string `json:"hooks"`
	// Secrets are the secret names the module may use through the host
	// (hmac_sha256, and as the auth of its own requests) beyond the ones
	// Auth declares.
	Secrets []string `json:"secrets,omitempty"`
}

// Mapping is the wire form of one capability.
type Mapping struct {
	Method     string      `json:"method"`
	Path       []Segment   `json:"path"`
	Query      *Expr       `json:"query,omitempty"`
	Body       *Expr       `json:"body,omitempty"`
	Headers    *Expr       `json:"headers,omitempty"`
	BodyFormat string      `json:"body_format,omitempty"` // json form_urlencoded multipart
	Transport  string      `json:"transport,omitempty"`   // http graphql wasm
	Response   *Response   `json:"response,omitempty"`
	Pagination *Pagination `json:"pagination,omitempty"`
	// IDVar is the path variable that binds the row id when a single-row
	// capability's only path variable is not named id (Plasm's rule):
	// the compiler gives it the id when the call has no value for it.
	IDVar string `json:"id_var,omitempty"`
}

// Segment is one path segment: a literal or a variable.
type Segment struct {
	Type  string `json:"type"` // literal | var
	Value string `json:"value,omitempty"`
	Name  string `json:"name,omitempty"`
	// Suffix is appended to a variable with no "/" ({range}:clear).
	Suffix string `json:"suffix,omitempty"`
}

// Response says where rows live in a response body. Shorthands are expanded
// by the loader: single → {Single: true}; bare_list → {Items: true};
// results_list → {ItemsPath: [results]}; items_list → {ItemsPath: [items]}.
type Response struct {
	Single       bool     `json:"single,omitempty"`
	Items        bool     `json:"items,omitempty"`
	ItemsPath    []string `json:"items_path,omitempty"`
	ItemInnerKey string   `json:"item_inner_key,omitempty"`
	// WrapRootScalar makes a bare number or string body a one-row list.
	WrapRootScalar bool `json:"wrap_root_scalar,omitempty"`
	// Preprocess reshapes the body before rows are selected (plasm.go).
	Preprocess *Preprocess `json:"response_preprocess,omitempty"`
	// Default marks the shape the loader gave a list mapping that names
	// none (Plasm's rows under "results"): an object answer without that
	// key is then refused, since nothing said where its rows are.
	Default bool `json:"default,omitempty"`
}

// Pagination describes how a list continues.
type Pagination struct {
	Params         map[string]PageParam `json:"params"`
	ParamOrder     []string             `json:"param_order,omitempty"`
	Location       string               `json:"location,omitempty"` // query body link_header response_next_url
	ResponsePrefix []string             `json:"response_prefix,omitempty"`
	StopWhen       *StopWhen            `json:"stop_when,omitempty"`
	// BodyMergePath is where body-located page params are merged
	// (GraphQL variables.page); nil means the body's top level.
	BodyMergePath []string `json:"body_merge_path,omitempty"`
	// NextURLField names the response field holding the next page's URL
	// for location response_next_url.
	NextURLField string `json:"response_next_url_field,omitempty"`
}

// PageParam is one paging parameter: exactly one of Counter, Fixed, FromResponse.
type PageParam struct {
	Counter      *int64 `json:"counter,omitempty"` // start value
	Step         int64  `json:"step,omitempty"`
	Max          int64  `json:"max,omitempty"`
	Fixed        any    `json:"fixed,omitempty"`
	FromResponse string `json:"from_response,omitempty"`
}

// StopWhen ends pagination when a response field equals a value or is absent.
type StopWhen struct {
	Field  string `json:"field"`
	Eq     any    `json:"eq,omitempty"`
	HasEq  bool   `json:"has_eq,omitempty"`
	Absent bool   `json:"absent,omitempty"`
}

// CML expression types.
const (
	ExprVar    = "var"
	ExprConst  = "const"
	ExprObject = "object"
	ExprArray  = "array"
	ExprIf     = "if"
	ExprJoin   = "join"
	ExprFormat = "format"
)

// Expr is a CML expression.
type Expr struct {
	Type     string           `json:"type"`
	Name     string           `json:"name,omitempty"`      // var
	Value    any              `json:"value,omitempty"`     // const
	Fields   []ObjectKV       `json:"fields,omitempty"`    // object
	Items    []*Expr          `json:"items,omitempty"`     // array
	Cond     *Cond            `json:"condition,omitempty"` // if
	Then     *Expr            `json:"then_expr,omitempty"`
	Else     *Expr            `json:"else_expr,omitempty"`
	Sep      string           `json:"sep,omitempty"`      // join
	Expr     *Expr            `json:"expr,omitempty"`     // join
	Template string           `json:"template,omitempty"` // format: "{name}" placeholders
	Vars     map[string]*Expr `json:"vars,omitempty"`     // format
}

// ObjectKV is one key of an object expression; order is preserved.
type ObjectKV struct {
	Key   string `json:"key"`
	Value *Expr  `json:"value"`
}

// Cond is a CML condition: exactly one of Exists, Equals, Bool.
type Cond struct {
	Exists string      `json:"exists,omitempty"`
	Equals *EqualsCond `json:"equals,omitempty"`
	Bool   *Expr       `json:"bool,omitempty"`
}

// EqualsCond compares two expressions.
type EqualsCond struct {
	Left  *Expr `json:"left"`
	Right *Expr `json:"right"`
}

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
	// Digest is the sha256 (hex) of the catalog's source files, set by the loader.
	Digest string `json:"digest,omitempty"`
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
}

// Field is one attribute of an entity.
type Field struct {
	Name        string   `json:"name"`
	ValueRef    string   `json:"value_ref"`
	Required    bool     `json:"required,omitempty"`
	Description string   `json:"description,omitempty"`
	Path        []string `json:"path,omitempty"` // JSON path in the wire object; nil means [Name]
}

// Relation kinds of materialisation.
const (
	FromParentGet       = "from_parent_get"
	QueryScoped         = "query_scoped"
	QueryScopedBindings = "query_scoped_bindings"
)

// Relation navigates from an entity to another.
type Relation struct {
	Name        string      `json:"name"`
	Target      string      `json:"target"`
	Cardinality string      `json:"cardinality"` // one | many
	Description string      `json:"description,omitempty"`
	Materialize Materialize `json:"materialize"`
}

// Materialize says how a relation's rows are obtained.
type Materialize struct {
	Kind       string            `json:"kind"`
	Path       []PathStep        `json:"path,omitempty"`       // from_parent_get
	Capability string            `json:"capability,omitempty"` // query_scoped*
	Param      string            `json:"param,omitempty"`      // query_scoped
	Bindings   map[string]string `json:"bindings,omitempty"`   // query_scoped_bindings: param -> parent field
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
	Name     string `json:"name"`
	ValueRef string `json:"value_ref"`
	Required bool   `json:"required,omitempty"`
	Role     string `json:"role,omitempty"` // empty means filter
}

// Output describes a capability that returns no rows.
type Output struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// Auth is how requests authenticate. Secret names (Env, ClientIDEnv, …) are
// resolved by the host only; the guest never sees a secret value.
type Auth struct {
	Scheme          string   `json:"scheme"` // none api_key_header api_key_query bearer_token oauth2_client_credentials
	Header          string   `json:"header,omitempty"`
	Param           string   `json:"param,omitempty"`
	Env             string   `json:"env,omitempty"`
	TokenURL        string   `json:"token_url,omitempty"`
	ClientIDEnv     string   `json:"client_id_env,omitempty"`
	ClientSecretEnv string   `json:"client_secret_env,omitempty"`
	Scopes          []string `json:"scopes,omitempty"`
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
}

// Segment is one path segment: a literal or a variable.
type Segment struct {
	Type  string `json:"type"` // literal | var
	Value string `json:"value,omitempty"`
	Name  string `json:"name,omitempty"`
}

// Response says where rows live in a response body. Shorthands are expanded
// by the loader: single → {Single: true}; bare_list → {Items: true};
// results_list → {ItemsPath: [results]}; items_list → {ItemsPath: [items]}.
type Response struct {
	Single       bool     `json:"single,omitempty"`
	Items        bool     `json:"items,omitempty"`
	ItemsPath    []string `json:"items_path,omitempty"`
	ItemInnerKey string   `json:"item_inner_key,omitempty"`
}

// Pagination describes how a list continues.
type Pagination struct {
	Params         map[string]PageParam `json:"params"`
	ParamOrder     []string             `json:"param_order,omitempty"`
	Location       string               `json:"location,omitempty"` // query body link_header response_next_url
	ResponsePrefix []string             `json:"response_prefix,omitempty"`
	StopWhen       *StopWhen            `json:"stop_when,omitempty"`
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

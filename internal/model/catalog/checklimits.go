package catalog

// Bounds every extraction spec keeps (extract.Spec.Validate refuses a spec
// past one, on the host and in the engine). The engine compiles a spec
// from the catalog, so Check holds the catalog to the same bounds: a
// catalog Check passes never compiles to a spec the host refuses. The
// extract package's limits are these constants.
const (
	// MaxWirePath bounds a wire path's steps (a field's path, items_path,
	// a relation's materialize path): the decoder's JSON nesting limit, so
	// a longer path could never match.
	MaxWirePath = 128
	// MaxText bounds the bytes of every name and string a spec carries.
	MaxText = 4096
	// MaxRuleStrings bounds a derive rule's string lists (alternate
	// prefixes, prefer keys).
	MaxRuleStrings = 64
	// MaxFields bounds an entity's fields (a spec's columns).
	MaxFields = 1024
	// MaxPageParams bounds a mapping's pagination parameters.
	MaxPageParams = 64
)

// place names where a problem is; it is called only when one is found,
// so a valid catalog builds no names (Check runs on every load).
type place func() string

// at is a place already named.
func at(s string) place { return func() string { return s } }

// text fails at a string longer than MaxText.
func (k *checker) text(where place, what, s string) {
	if len(s) > MaxText {
		k.fail(where(), "%s of %d bytes, limit %d", what, len(s), MaxText)
	}
}

// path fails at a wire path of more than MaxWirePath steps or with a
// step longer than MaxText.
func (k *checker) path(where place, what string, p []string) {
	if len(p) > MaxWirePath {
		k.fail(where(), "%s of %d steps, limit %d", what, len(p), MaxWirePath)
	}
	for _, s := range p {
		k.text(where, what, s)
	}
}

// catalogLimits checks the catalog-wide strings a spec carries.
func (k *checker) catalogLimits() {
	k.text(at("catalog"), "auth env", k.c.Auth.Env)
	k.text(at("catalog"), "http_backend", k.c.HTTPBackend)
}

// fieldLimits checks what of a field becomes a spec's column; entity
// calls it, in its one walk of the fields, for a field with a long name,
// a path or a derive rule.
func (k *checker) fieldLimits(where entityWhere, fn string, f *Field) {
	fw := func() string { return where.at("field " + fn) }
	k.text(fw, "name", fn)
	k.path(fw, "path", f.Path)
	k.derive(fw, f.Derive)
}

// derive checks a field's derive rule as the spec check does: a
// negative part_index would index before a derived value's first part.
func (k *checker) derive(where place, d *Derive) {
	if d == nil {
		return
	}
	if d.PartIndex < 0 {
		k.fail(where(), "derive part_index %d is negative", d.PartIndex)
	}
	if len(d.AltPrefixes) > MaxRuleStrings || len(d.PreferKeys) > MaxRuleStrings {
		k.fail(where(), "derive rule lists more than %d strings", MaxRuleStrings)
	}
	for _, s := range [...]string{d.Type, d.Prefix, d.Equals, d.MatchKey, d.ValueField, d.Key, d.BlocksKey, d.RefField, d.Segment} {
		k.text(where, "derive", s)
	}
	for _, s := range d.AltPrefixes {
		k.text(where, "derive", s)
	}
	for _, s := range d.PreferKeys {
		k.text(where, "derive", s)
	}
}

// relationLimits checks a from_parent_get relation's name and path; a
// chain of them is bounded where it is compiled (decode's embedded).
func (k *checker) relationLimits(where place, name string, r *Relation) {
	k.text(where, "name", name)
	if len(r.Materialize.Path) > MaxWirePath {
		k.fail(where(), "materialize path of %d steps, limit %d", len(r.Materialize.Path), MaxWirePath)
	}
	for _, st := range r.Materialize.Path {
		k.text(where, "materialize path", st.Key)
	}
}

// mappingLimits checks a mapping's response shape and pagination.
func (k *checker) mappingLimits(where place, m *Mapping) {
	if r := m.Response; r != nil {
		k.path(where, "items_path", r.ItemsPath)
		k.text(where, "item_inner_key", r.ItemInnerKey)
		if pp := r.Preprocess; pp != nil {
			k.path(where, "response_preprocess path", pp.Path)
			for _, s := range [...]string{pp.Kind, pp.IDField, pp.IDVar, pp.NestedArray, pp.FromEach, pp.Field} {
				k.text(where, "response_preprocess", s)
			}
		}
	}
	p := m.Pagination
	if p == nil {
		return
	}
	k.text(where, "pagination location", p.Location)
	k.path(where, "pagination response_prefix", p.ResponsePrefix)
	k.text(where, "pagination response_next_url_field", p.NextURLField)
	if len(p.Params) > MaxPageParams {
		k.fail(where(), "pagination has %d params, limit %d", len(p.Params), MaxPageParams)
	}
	for n, pp := range p.Params {
		k.text(where, "pagination param", n)
		k.text(where, "pagination from_response", pp.FromResponse)
	}
	if sw := p.StopWhen; sw != nil {
		k.text(where, "pagination stop_when field", sw.Field)
	}
}

package decode

import (
	"fmt"
	"sort"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/engine/cml"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// Spec compiles the extraction spec of one capability (or, with relation
// set, of that from_parent_get relation's rows embedded in its answer):
// every catalog lookup the decoder needs, done once. A capability the
// standard decoder does not decode (transport wasm) is refused here; a
// catalog problem that the decoder reports only for successful answers is
// carried in the spec (Invalid) so the order of errors stays as it was.
func Spec(cat *catalog.Catalog, capability, relation string) (*extract.Spec, *abi.Error) {
	s, aerr := compile(cat, capability, relation)
	if aerr != nil {
		return nil, aerr
	}
	// The host refuses a spec past extract's bounds. catalog.Check holds
	// a catalog to the same bounds, so this refuses only what Check does
	// not see (a catalog frozen without it); answering a typed catalog
	// error here keeps the host from receiving a spec it would refuse.
	if len(s.Invalid) > extract.MaxTextSize {
		s.Invalid = s.Invalid[:extract.MaxTextSize]
	}
	if err := s.Validate(); err != nil {
		return nil, &abi.Error{Code: abi.CodeCatalog,
			Message: fmt.Sprintf("catalog %q, capability %q: %v", cat.EntryID, capability, err)}
	}
	return s, nil
}

// compile builds Spec's extraction spec without bounding it.
func compile(cat *catalog.Catalog, capability, relation string) (*extract.Spec, *abi.Error) {
	if cat == nil {
		return nil, &abi.Error{Code: abi.CodeBadRequest, Message: "decode: missing catalog or request"}
	}
	cp := cat.Capabilities[capability]
	if cp == nil {
		return nil, &abi.Error{Code: abi.CodeDecode,
			Message: fmt.Sprintf("catalog %q has no capability %q", cat.EntryID, capability)}
	}
	m := cat.Mappings[capability]
	if m == nil {
		m = &catalog.Mapping{}
	}
	if m.Transport == cml.TransportWasm {
		return nil, &abi.Error{Code: abi.CodeDecode, Hint: "the host routes transport wasm to the catalog's module",
			Message: fmt.Sprintf("decode %s: transport wasm is decoded by the catalog's vendor module, not the standard decoder", cp.Name)}
	}
	s := &extract.Spec{
		Version:    extract.Version,
		Capability: cp.Name,
		AuthEnv:    cat.Auth.Env,
		Read:       cp.IsRead(),
		NoRows:     cp.Kind == catalog.KindAction && cp.Output != nil && len(cp.Provides) == 0,
		GraphQL:    m.Transport == cml.TransportGraphQL,
		Response:   m.Response,
		Backend:    cat.HTTPBackend,
		Columns:    []extract.Column{},
	}
	// Pick the entity whose fields become columns: the capability's, or the
	// relation's target when decoding embedded relation rows.
	ent := cat.Entities[cp.Entity]
	if ent == nil {
		s.Invalid = fmt.Sprintf("capability entity %q is not in the catalog", cp.Entity)
		return s, nil
	}
	if relation != "" {
		path, hops, target, invalid := embedded(cat, ent, relation)
		if invalid != "" {
			s.Invalid = invalid
			return s, nil
		}
		ent = target
		s.Relation = &extract.Relation{Name: relation, Path: path, Hops: hops}
	}
	s.Columns = columnSpecs(cat, ent)
	if f := ent.Fields[ent.IDField]; ent.IDField != "" && f != nil {
		s.ScalarID = f.WirePath()
		s.IDFallback = idFallback(s.Columns, ent.IDField, s.ScalarID)
	}
	if p := m.Pagination; p != nil && relation == "" {
		s.Paging = pagingSpec(m, p)
	}
	return s, nil
}

// columnSpecs are the entity's fields in declaration order (sorted by
// name for an entity built without FieldOrder), each with its wire path,
// the type it is coerced to and its derive rule.
func columnSpecs(cat *catalog.Catalog, ent *catalog.Entity) []extract.Column {
	names := ent.FieldOrder
	if len(names) == 0 {
		names = make([]string, 0, len(ent.Fields))
		for n := range ent.Fields {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	cols := make([]extract.Column, len(names))
	for i, name := range names {
		c := extract.Column{Name: name, Path: []string{name}}
		if f := ent.Fields[name]; f != nil {
			c.Path = f.WirePath()
			c.Type = extract.ColumnType(cat, cat.Values[f.ValueRef])
			if f.Derive != nil {
				c.Derive, c.WholeRow = f.Derive, f.WholeRow
			}
		}
		cols[i] = c
	}
	return cols
}

// pagingSpec resolves a mapping's pagination: its location with defaults
// applied and its parameters in the order the request compiler walks them.
func pagingSpec(m *catalog.Mapping, p *catalog.Pagination) *extract.Paging {
	out := &extract.Paging{
		Location:       cml.Location(m),
		ResponsePrefix: p.ResponsePrefix,
		StopWhen:       p.StopWhen,
		NextURLField:   p.NextURLField,
	}
	for _, name := range cml.ParamNames(p) {
		pp := p.Params[name]
		out.Params = append(out.Params, extract.Param{Name: name, Counter: pp.Counter, Step: pp.Step,
			Max: pp.Max, Fixed: pp.Fixed, FromResponse: pp.FromResponse})
	}
	return out
}

// Package extract is the response decoder: it applies an extraction Spec
// (a capability's response shape, compiled once from its catalog by the
// engine) to a backend's response and produces the rows and next-page
// state the executor uses.
//
// It is the only decoder. The engine compiles specs inside the sandbox,
// where catalog logic stays, and the host applies them natively to every
// page (sandbox.Engine.Decode); the engine's own plasm_decode export
// applies the same code inside the guest. Specs cross the sandbox boundary,
// so Validate bounds every list and string in one before the host uses
// it, and Apply takes a hook it calls between units of work so the host
// can stop a long decode at the call's deadline.
//
// The package is pure (no I/O, no goroutines, standard library only) so it
// also compiles into the wasip1 engine. Bodies are hostile input: size and
// nesting are capped before decoding and every failure is an *abi.Error
// with Code abi.CodeDecode, never a panic.
package extract

import (
	"errors"
	"fmt"

	"github.com/plasmd/plasmd/internal/model/catalog"
)

// Version is the spec format this package applies; a spec of another
// version is refused rather than read differently.
const Version = 1

// Spec is everything the decoder needs to know about one capability (or
// one from_parent_get relation of its entity), resolved from the catalog:
// no catalog lookups are left for Apply.
type Spec struct {
	Version    int    `json:"version"`
	Capability string `json:"capability"`
	// AuthEnv names the catalog's credential secret, for the hint on a
	// 401 or 403 answer.
	AuthEnv string `json:"auth_env,omitempty"`
	// Read says an empty 2xx body is an error (reads must return rows).
	Read bool `json:"read,omitempty"`
	// NoRows: an action whose output provides no fields decodes to an empty
	// table whatever its body.
	NoRows bool `json:"no_rows,omitempty"`
	// Invalid is a catalog problem found while compiling (an unknown
	// entity or relation); it is reported for any 2xx answer, after the
	// status check, as the decoder always did.
	Invalid string `json:"invalid,omitempty"`
	// GraphQL makes a top-level errors array an error.
	GraphQL bool     `json:"graphql,omitempty"`
	Columns []Column `json:"columns"`
	// Response is the mapping's response shape; nil reads an array as rows
	// and an object as one row.
	Response *catalog.Response `json:"response,omitempty"`
	// ScalarID is the wire path of the entity's id, which a bare string or
	// number item fills (id feeds); empty means such items are refused.
	ScalarID []string `json:"scalar_id,omitempty"`
	// IDFallback, when set, fills a missing id from other keys (Plasm).
	IDFallback *IDFallback `json:"id_fallback,omitempty"`
	// Relation, when set, decodes the embedded rows of a from_parent_get
	// relation found under each item.
	Relation *Relation `json:"relation,omitempty"`
	// Paging computes the next page's state; nil means one page.
	Paging *Paging `json:"paging,omitempty"`
	// Backend is the catalog's http_backend, the fallback base for
	// relative next-page references.
	Backend string `json:"backend,omitempty"`
}

// Column is one output column: the value at Path in the item, coerced by
// Type ("integer", "number", or anything else for none), or derived.
type Column struct {
	Name string   `json:"name"`
	Path []string `json:"path,omitempty"`
	Type string   `json:"type,omitempty"`
	// Derive computes the value from what is at Path (or from the whole
	// item when WholeRow is set).
	Derive   *catalog.Derive `json:"derive,omitempty"`
	WholeRow bool            `json:"whole_row,omitempty"`
}

// Relation is where an embedded relation's rows are in each item: a
// from_parent_get relation's materialize path, or a chain's paths joined.
type Relation struct {
	Name string             `json:"name"`
	Path []catalog.PathStep `json:"path"`
	// Hops splits Path by the relations of the chain, each with its
	// cardinality (relation.go). A spec without Hops, as an engine from
	// before they were carried compiles it, reads Path as one relation of
	// cardinality many, the reading it always had; the field is optional
	// so either side of the change reads the other's specs.
	Hops []Hop `json:"hops,omitempty"`
}

// Paging is a mapping's pagination with its defaults applied.
type Paging struct {
	// Location is where paging parameters go (query, body, link_header,
	// response_next_url), already defaulted.
	Location string `json:"location"`
	// Params are in the order the compiler walks them.
	Params         []Param           `json:"params,omitempty"`
	ResponsePrefix []string          `json:"response_prefix,omitempty"`
	StopWhen       *catalog.StopWhen `json:"stop_when,omitempty"`
	NextURLField   string            `json:"next_url_field,omitempty"`
}

// Param is one paging parameter: exactly one of Counter, Fixed,
// FromResponse is meaningful.
type Param struct {
	Name         string `json:"name"`
	Counter      *int64 `json:"counter,omitempty"`
	Step         int64  `json:"step,omitempty"`
	Max          int64  `json:"max,omitempty"`
	Fixed        any    `json:"fixed,omitempty"`
	FromResponse string `json:"from_response,omitempty"`
}

// Bounds on a spec. They are far above what a catalog declares and keep
// a hostile spec's cost on the host proportional to the body it reads.
// They are the catalog's limits (catalog.Check holds a catalog to them),
// so a catalog Check passes compiles to a spec Validate passes.
const (
	MaxColumns  = catalog.MaxFields
	MaxPath     = catalog.MaxWirePath
	MaxParams   = catalog.MaxPageParams
	MaxStrings  = catalog.MaxRuleStrings // list-valued rule settings (alternate prefixes, prefer keys)
	MaxTextSize = catalog.MaxText
)

// ErrSpec is wrapped by every Validate error.
var ErrSpec = errors.New("invalid extraction spec")

// Validate checks s's version and bounds. It does not judge what the
// rules mean: an unknown derive or preprocess kind yields null or leaves
// the body unchanged, exactly as the decoder always treated them.
func (s *Spec) Validate() error {
	if s == nil {
		return fmt.Errorf("%w: missing", ErrSpec)
	}
	if s.Version != Version {
		return fmt.Errorf("%w: version %d, this host applies %d", ErrSpec, s.Version, Version)
	}
	v := validator{}
	v.text("capability", s.Capability)
	v.text("auth_env", s.AuthEnv)
	v.text("invalid", s.Invalid)
	v.text("backend", s.Backend)
	if len(s.Columns) > MaxColumns {
		v.fail("%d columns, limit %d", len(s.Columns), MaxColumns)
	}
	for _, c := range s.Columns {
		v.text("column", c.Name)
		v.path("column path", c.Path)
		v.text("column type", c.Type)
		v.derive(c.Derive)
	}
	if r := s.Response; r != nil {
		v.path("items_path", r.ItemsPath)
		v.text("item_inner_key", r.ItemInnerKey)
		if pp := r.Preprocess; pp != nil {
			v.path("response_preprocess path", pp.Path)
			for _, t := range []string{pp.Kind, pp.IDField, pp.IDVar, pp.NestedArray, pp.FromEach, pp.Field} {
				v.text("response_preprocess", t)
			}
		}
	}
	v.path("scalar id", s.ScalarID)
	if f := s.IDFallback; f != nil {
		if f.Column < 0 || f.Column >= len(s.Columns) {
			v.fail("id fallback column %d of %d", f.Column, len(s.Columns))
		}
		v.path("id fallback keys", f.Keys)
	}
	if r := s.Relation; r != nil {
		v.text("relation", r.Name)
		if len(r.Path) > MaxPath {
			v.fail("relation path of %d steps, limit %d", len(r.Path), MaxPath)
		}
		for _, st := range r.Path {
			v.text("relation path", st.Key)
		}
		v.hops(r)
	}
	if p := s.Paging; p != nil {
		v.text("paging location", p.Location)
		v.path("response_prefix", p.ResponsePrefix)
		v.text("next_url_field", p.NextURLField)
		if len(p.Params) > MaxParams {
			v.fail("%d paging parameters, limit %d", len(p.Params), MaxParams)
		}
		for _, pp := range p.Params {
			v.text("paging parameter", pp.Name)
			v.text("from_response", pp.FromResponse)
		}
		if sw := p.StopWhen; sw != nil {
			v.text("stop_when field", sw.Field)
		}
	}
	return v.err
}

type validator struct{ err error }

func (v *validator) fail(format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, args...))
	}
}

func (v *validator) text(what, s string) {
	if len(s) > MaxTextSize {
		v.fail("%s of %d bytes, limit %d", what, len(s), MaxTextSize)
	}
}

func (v *validator) path(what string, p []string) {
	if len(p) > MaxPath {
		v.fail("%s of %d steps, limit %d", what, len(p), MaxPath)
	}
	for _, k := range p {
		v.text(what, k)
	}
}

func (v *validator) derive(d *catalog.Derive) {
	if d == nil {
		return
	}
	if d.PartIndex < 0 {
		v.fail("derive part_index %d is negative", d.PartIndex)
	}
	if len(d.AltPrefixes) > MaxStrings || len(d.PreferKeys) > MaxStrings {
		v.fail("derive rule lists more than %d strings", MaxStrings)
	}
	for _, s := range append(append([]string{d.Type, d.Prefix, d.Equals, d.MatchKey, d.ValueField, d.Key,
		d.BlocksKey, d.RefField, d.Segment}, d.AltPrefixes...), d.PreferKeys...) {
		v.text("derive", s)
	}
}

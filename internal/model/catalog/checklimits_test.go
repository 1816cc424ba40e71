package catalog

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckLimits: each bound an extraction spec keeps, passed once, is a
// typed Check error naming where; the same element at its bound passes.
// The engine compiles specs from the catalog, so a catalog Check passes
// must never compile to one the host refuses (decode's
// TestSpecOfCheckedCatalogValidates holds the two together).
func TestCheckLimits(t *testing.T) {
	long := strings.Repeat("x", MaxText+1)
	steps := func(n int) []string { return strings.Split(strings.Repeat("k.", n-1)+"k", ".") }
	pathSteps := func(n int) []PathStep {
		out := make([]PathStep, n)
		for i := range out {
			out[i] = PathStep{Key: "k"}
		}
		return out
	}
	strs := func(n int) []string { return steps(n) }
	title := func(c *Catalog) *Field { return c.Entities["Issue"].Fields["title"] }
	tests := []struct {
		name string
		edit func(c *Catalog)
		want string // "" = valid
	}{
		{"cardinality upper case", func(c *Catalog) { c.Entities["Issue"].Relations["owner"].Cardinality = "ONE" },
			`entity Issue, relation owner: cardinality "ONE" is not one or many`},
		{"cardinality missing", func(c *Catalog) { c.Entities["Issue"].Relations["owner"].Cardinality = "" },
			`relation owner: cardinality "" is not one or many`},
		{"negative part_index", func(c *Catalog) {
			title(c).Derive = &Derive{Type: DeriveSegmentsAfterPrefix, Prefix: "p/", PartIndex: -1}
		}, "entity Issue, field title: derive part_index -1 is negative"},
		{"part_index zero", func(c *Catalog) { title(c).Derive = &Derive{Type: DeriveSegmentsAfterPrefix} }, ""},
		{"derive list at limit", func(c *Catalog) { title(c).Derive = &Derive{Type: "x", AltPrefixes: strs(MaxRuleStrings)} }, ""},
		{"derive list past limit", func(c *Catalog) { title(c).Derive = &Derive{Type: "x", PreferKeys: strs(MaxRuleStrings + 1)} },
			"derive rule lists more than 64 strings"},
		{"derive text", func(c *Catalog) { title(c).Derive = &Derive{Type: "x", Prefix: long} }, "field title: derive of 4097 bytes"},
		{"field path at limit", func(c *Catalog) { title(c).Path = steps(MaxWirePath) }, ""},
		{"field path past limit", func(c *Catalog) { title(c).Path = steps(MaxWirePath + 1) },
			"entity Issue, field title: path of 129 steps, limit 128"},
		{"field path step text", func(c *Catalog) { title(c).Path = []string{long} }, "field title: path of 4097 bytes"},
		{"field name text", func(c *Catalog) {
			e := c.Entities["Issue"]
			e.Fields[long] = &Field{Name: long}
			e.FieldOrder = append(e.FieldOrder, long)
		}, "name of 4097 bytes"},
		{"too many fields", func(c *Catalog) {
			e := c.Entities["Me"]
			for i := range MaxFields + 1 {
				n := strings.Repeat("f", i+1)
				e.Fields[n] = &Field{Name: n}
			}
		}, "entity Me: has 1025 fields, limit 1024"},
		{"value type text", func(c *Catalog) { c.Values["text"].Type = long }, "value text: type of 4097 bytes"},
		{"auth env text", func(c *Catalog) { c.Auth.Env = long }, "catalog: auth env of 4097 bytes"},
		{"backend text", func(c *Catalog) { c.HTTPBackend = long }, "catalog: http_backend of 4097 bytes"},
		{"capability name text", func(c *Catalog) {
			c.Capabilities[long] = &Capability{Name: long, Kind: KindGet, Entity: "Issue"}
		}, "capability: name of 4097 bytes"},
		{"materialize path past limit", func(c *Catalog) {
			c.Entities["Issue"].Relations["owner"].Materialize.Path = pathSteps(MaxWirePath + 1)
		}, "entity Issue, relation owner: materialize path of 129 steps"},
		{"materialize key text", func(c *Catalog) {
			c.Entities["Issue"].Relations["owner"].Materialize.Path = []PathStep{{Key: long}}
		}, "relation owner: materialize path of 4097 bytes"},
		{"items_path past limit", func(c *Catalog) {
			c.Mappings["issue_get"].Response = &Response{ItemsPath: steps(MaxWirePath + 1)}
		}, "mapping issue_get: items_path of 129 steps"},
		{"preprocess text", func(c *Catalog) {
			c.Mappings["issue_get"].Response = &Response{Preprocess: &Preprocess{Kind: long}}
		}, "mapping issue_get: response_preprocess of 4097 bytes"},
		{"pagination params past limit", func(c *Catalog) {
			p := c.Mappings["user_query"].Pagination
			p.ParamOrder = nil
			for i := range MaxPageParams + 1 {
				p.Params[strings.Repeat("p", i+1)] = PageParam{}
			}
		}, "mapping user_query: pagination has 66 params, limit 64"},
		{"pagination prefix", func(c *Catalog) {
			c.Mappings["user_query"].Pagination.ResponsePrefix = steps(MaxWirePath + 1)
		}, "pagination response_prefix of 129 steps"},
		{"stop_when text", func(c *Catalog) {
			c.Mappings["user_query"].Pagination.StopWhen = &StopWhen{Field: long}
		}, "pagination stop_when field of 4097 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkedCatalog()
			tt.edit(c)
			err := c.Check()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *CheckError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

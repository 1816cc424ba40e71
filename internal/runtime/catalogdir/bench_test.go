package catalogdir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"go.yaml.in/yaml/v3"
)

// aliasHeavy is a mappings file whose 200 capabilities share one anchored
// pagination block, as Plasm's catalogs do.
func aliasHeavy() (domain, mappings []byte) {
	var d, m strings.Builder
	d.WriteString("version: 1\nvalues: {s: {type: string}}\nentities: {T: {id_field: id, fields: {id: {value_ref: s}}}}\ncapabilities:\n")
	m.WriteString("x-pag: &pag\n  params: {page: {counter: 1}, per_page: {fixed: 50}}\n  stop_when: {field: has_more, eq: false}\n")
	for i := 0; i < 200; i++ {
		name := "t_query" + itoa(i)
		d.WriteString("  " + name + ": {kind: query, entity: T}\n")
		m.WriteString(name + ":\n  method: GET\n  path: [{type: literal, value: t}]\n  response: {items: data}\n  pagination: *pag\n")
	}
	return []byte(d.String()), []byte(m.String())
}

// BenchmarkLoad loads the plasmforms fixture and an alias-heavy catalog.
// The baseline is yaml.v3 decoding the same bytes into a node tree, which
// every load starts with; the difference is alias expansion, the checks
// and building the model.
func BenchmarkLoad(b *testing.B) {
	fixture := "../../../testdata/catalogs/plasmforms"
	fd, err := os.ReadFile(filepath.Join(fixture, DomainFile))
	if err != nil {
		b.Fatal(err)
	}
	fm, err := os.ReadFile(filepath.Join(fixture, MappingsFile))
	if err != nil {
		b.Fatal(err)
	}
	ad, am := aliasHeavy()
	for _, c := range []struct {
		name string
		d, m []byte
	}{{"plasmforms", fd, fm}, {"aliases", ad, am}} {
		fsys := fstest.MapFS{"c/domain.yaml": {Data: c.d}, "c/mappings.yaml": {Data: c.m}}
		b.Run(c.name+"/yaml-nodes-baseline", func(b *testing.B) {
			b.SetBytes(int64(len(c.d) + len(c.m)))
			for b.Loop() {
				for _, data := range [][]byte{c.d, c.m} {
					var n yaml.Node
					if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&n); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(c.name+"/load", func(b *testing.B) {
			b.SetBytes(int64(len(c.d) + len(c.m)))
			for b.Loop() {
				if _, err := Load(fsys, "c", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBillionLaughs measures refusing a 40-level alias bomb (10^40
// expanded nodes), against yaml.v3 merely parsing it into nodes.
func BenchmarkBillionLaughs(b *testing.B) {
	var d strings.Builder
	d.WriteString("version: 1\nx0: &x0 [a, a, a, a, a, a, a, a, a, a]\n")
	for i := 1; i < 40; i++ {
		p := "*x" + itoa(i-1)
		d.WriteString("x" + itoa(i) + ": &x" + itoa(i) + " [" + strings.Repeat(p+", ", 9) + p + "]\n")
	}
	data := []byte(d.String())
	b.Run("yaml-nodes-baseline", func(b *testing.B) {
		for b.Loop() {
			var n yaml.Node
			if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refuse", func(b *testing.B) {
		fsys := fstest.MapFS{"c/domain.yaml": {Data: data}, "c/mappings.yaml": {}}
		for b.Loop() {
			if _, err := Load(fsys, "c", ""); err == nil || !strings.Contains(err.Error(), "expand to more than") {
				b.Fatalf("not refused: %v", err)
			}
		}
	})
}

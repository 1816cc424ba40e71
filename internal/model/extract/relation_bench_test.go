package extract

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// relationBody is a list answer of n items, each embedding an author
// object and a list of three lines, the same bytes on every run.
func relationBody(n int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"title":"item %d","author":{"id":"u%d","name":"User %d"},"lines":[{"id":"l%d-1","name":"a"},{"id":"l%d-2","name":"b"},{"id":"l%d-3","name":"c"}]}`,
			i, i, i%40, i%40, i, i, i)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// BenchmarkEmbeddedRelation decodes the rows of an embedded relation
// from a 1000-item answer: a cardinality-one object per item, a list per
// item (as a spec without hops reads it, which an older spec also
// compiles to), and the baseline, encoding/json decoding the same bytes
// into []map[string]any.
func BenchmarkEmbeddedRelation(b *testing.B) {
	body := relationBody(1000)
	req := &abi.DecodeRequest{Capability: "item_query", Status: 200}
	cases := []struct {
		name string
		rel  *Relation
	}{
		{"one", &Relation{Name: "author", Path: []catalog.PathStep{{Key: "author"}}, Hops: []Hop{{Name: "author", Steps: 1, One: true}}}},
		{"many", &Relation{Name: "lines", Path: []catalog.PathStep{{Key: "lines"}}}},
	}
	for _, c := range cases {
		s := relSpec(c.rel)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, aerr := Apply(s, req, body, Options{}); aerr != nil {
					b.Fatal(aerr)
				}
			}
		})
	}
	b.Run("baseline_encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var v []map[string]any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

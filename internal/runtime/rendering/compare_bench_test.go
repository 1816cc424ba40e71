package rendering

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkRenderCompare renders a comparison per row over 1,000 rows of
// integers within 2^53; "direct" is the same comparison and output
// written in Go, the baseline.
func BenchmarkRenderCompare(b *testing.B) {
	rows := make([]map[string]any, 1000)
	for i := range rows {
		rows[i] = map[string]any{"n": int64(i), "id": json.Number("1234567890123456789" + strconv.Itoa(i%10))}
	}
	b.Run("template", func(b *testing.B) {
		for b.Loop() {
			tp, err := Parse(`{{range .rows}}{{if gt .n 500.0}}x{{end}}{{end}}`)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tp.Render(rows); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			var sb strings.Builder
			for _, r := range rows {
				if float64(r["n"].(int64)) > 500.0 {
					sb.WriteString("x")
				}
			}
			_ = sb.String()
		}
	})
}

package viewtemplate

import (
	"strings"
	"testing"
)

// The link template of the views fixture, against the same text built
// directly in Go (the baseline).
const linkSrc = "{%- set n = issue_id.split('-')[1] -%}\n/issues/{{ n }}{% if status == 'closed' %}?closed=1{% endif %}"

var linkVars = map[string]any{"issue_id": "iss-42", "status": "closed"}

func BenchmarkRenderParsed(b *testing.B) {
	t, err := Parse(linkSrc)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := t.Render(linkVars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseAndRender(b *testing.B) {
	for b.Loop() {
		t, err := Parse(linkSrc)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.Render(linkVars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectBaseline(b *testing.B) {
	for b.Loop() {
		id, _ := linkVars["issue_id"].(string)
		parts := strings.Split(id, "-")
		var sb strings.Builder
		sb.WriteString("/issues/" + parts[1])
		if linkVars["status"] == "closed" {
			sb.WriteString("?closed=1")
		}
		_ = sb.String()
	}
}

package lang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
)

// TestWholeNumberTextID: a whole number names a row of an entity whose id
// is text (User(42) for "42"), as Plasm accepts it. The id check owns that
// rule and hands on the id as the text it names, so a text-typed slot that
// receives the row (creator, a reference to User) sees text. Before,
// User(42) passed the id check and was then refused by the slot's text
// check ("creator expects text"). What the id check refuses is still
// refused with a position; a bare number given to a text slot is still
// refused by the slot's check, which names the reference.
func TestWholeNumberTextID(t *testing.T) {
	for _, tc := range []struct {
		program string
		want    string // the first node's args, or "error: <message part>"
	}{
		{`Issue{repository="golang/go", creator=User(42)}.limit(2)`, "map[creator:42(string) repository:golang/go(string)]"},
		{`Issue{repository="golang/go", creator=User(login=42)}.limit(2)`, "map[creator:42(string) repository:golang/go(string)]"},
		{`Issue{repository="golang/go", creator=User(id=42)}.limit(2)`, "map[creator:42(string) repository:golang/go(string)]"},
		{`Issue{repository="golang/go", creator=User(-7)}.limit(2)`, "map[creator:-7(string) repository:golang/go(string)]"},
		{`User(42)`, "map[id:42(string)]"},
		{`Issue{repository="golang/go", creator=User(042)}.limit(2)`, "error: number 042 has a leading zero"},
		{`Issue{repository="golang/go", creator=User(4.5)}.limit(2)`, "error: User id expects text"},
		{`Issue{repository="golang/go", creator=42}.limit(2)`, "error: creator expects text, got 42 (a reference to User, whose id is a string)"},
		// A number id stays a number.
		{`Issue(7)`, "map[id:7(int64)]"},
	} {
		cats := keyedCatalog()
		gh := cats["gh"]
		gh.Capabilities["user_get"] = keyedGet("user_get", "User", "login")
		gh.Capabilities["issue_get"] = keyedGet("issue_get", "Issue", "number")
		gh.Mappings["user_get"] = gh.Mappings["issue_query"]
		gh.Mappings["issue_get"] = gh.Mappings["issue_query"]
		p, err := Plan(&abi.PlanRequest{Program: tc.program}, cats)
		var got string
		if err != nil {
			got = "error: " + err.Message
			if err.Line == 0 {
				t.Errorf("%s: error without a position: %s", tc.program, err.Message)
			}
		} else {
			got = typedArgs(p.Nodes[0].Args)
		}
		if got != tc.want && !(strings.HasPrefix(tc.want, "error: ") && strings.Contains(got, strings.TrimPrefix(tc.want, "error: "))) {
			t.Errorf("%s:\n got %s\nwant %s", tc.program, got, tc.want)
		}
	}
}

// typedArgs prints args with each value's Go type, so "42" and 42 differ.
func typedArgs(args map[string]any) string {
	m := make(map[string]string, len(args))
	for k, v := range args {
		m[k] = fmt.Sprintf("%v(%T)", v, v)
	}
	return fmt.Sprint(m)
}

func keyedGet(name, entity, idParam string) *catalog.Capability {
	return &catalog.Capability{Name: name, Kind: catalog.KindGet, Entity: entity}
}

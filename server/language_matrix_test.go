package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/plasmd/plasmd/server"
)

// matrixRow is one program of testdata/language/matrix.yaml: the plan
// verdict it must get and the rows it must return against the demo
// backend, or the error it must be refused with.
type matrixRow struct {
	ID       string   `yaml:"id"`
	Plasm    []string `yaml:"plasm"` // Plasm matrix rows this one covers
	Entry    string   `yaml:"entry"` // catalog to open (default tracker)
	Entities []string `yaml:"entities"`
	Extend   []string `yaml:"extend"` // entry:Entity seeds added after opening
	Program  string   `yaml:"program"`
	Verdict  string   `yaml:"verdict"`
	Results  []struct {
		Label string `yaml:"label"`
		TSV   string `yaml:"tsv"`
		Count *int   `yaml:"count"`
	} `yaml:"results"`
	Error *struct {
		Code    string `yaml:"code"`
		Line    int    `yaml:"line"`
		Column  int    `yaml:"column"`
		Message string `yaml:"message"`
		Hint    string `yaml:"hint"`
		Status  int    `yaml:"status"`
	} `yaml:"error"`
	// RunError, with a verdict, is a substring of the run's refusal: the
	// program plans, then fails at run time.
	RunError string `yaml:"run_error"`
	Pending  string `yaml:"pending"`
}

type matrixFile struct {
	PlasmRows []string    `yaml:"plasm_rows"`
	Rows      []matrixRow `yaml:"rows"`
}

func loadMatrix(t *testing.T) matrixFile {
	t.Helper()
	b, err := os.ReadFile("../testdata/language/matrix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m matrixFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("matrix.yaml: %v", err)
	}
	return m
}

// TestLanguageMatrixCoverage checks that every row of Plasm's language
// matrices is covered by at least one of ours, and that rows are well
// formed.
func TestLanguageMatrixCoverage(t *testing.T) {
	m := loadMatrix(t)
	if len(m.PlasmRows) < 39 {
		t.Fatalf("plasm_rows lists %d rows; Plasm's matrices have 32 + 7", len(m.PlasmRows))
	}
	covered := map[string]bool{}
	ids := map[string]bool{}
	errors := 0
	for _, r := range m.Rows {
		if r.ID == "" || ids[r.ID] {
			t.Errorf("row id %q missing or repeated", r.ID)
		}
		ids[r.ID] = true
		if (r.Error == nil) == (r.Verdict == "") && r.Pending == "" {
			t.Errorf("%s: give exactly one of verdict and error", r.ID)
		}
		if r.Error != nil {
			errors++
		}
		for _, p := range r.Plasm {
			if !slices.Contains(m.PlasmRows, p) {
				t.Errorf("%s: unknown Plasm row %q", r.ID, p)
			}
			covered[p] = true
		}
	}
	for _, p := range m.PlasmRows {
		if !covered[p] {
			t.Errorf("Plasm row %s is not covered", p)
		}
	}
	if errors < 10 {
		t.Errorf("only %d error rows", errors)
	}
}

// TestLanguageMatrix runs every row against the demo backend through the
// HTTP surface, in file order (mutating rows come last and touch rows no
// earlier row reads).
func TestLanguageMatrix(t *testing.T) {
	m := loadMatrix(t)
	f := newMatrixFixture(t)
	for _, row := range m.Rows {
		t.Run(row.ID, func(t *testing.T) {
			if row.Pending != "" {
				t.Skip("pending: " + row.Pending)
			}
			ents := row.Entities
			if ents == nil {
				ents = []string{"Comment", "Issue", "Label", "Project", "User"}
			}
			entry := row.Entry
			if entry == "" {
				entry = "tracker"
			}
			// Sessions are reused by entity set: a federating row gets a
			// set of its own, so it cannot widen another row's session.
			path := f.open(t, entry, ents...)
			if len(row.Extend) > 0 {
				var seeds []map[string]string
				for _, s := range row.Extend {
					e, n, _ := strings.Cut(s, ":")
					seeds = append(seeds, map[string]string{"entry_id": e, "entity": n})
				}
				b, _ := json.Marshal(map[string]any{"seeds": seeds})
				if r := f.do(t, "POST", path+"/context", "application/json", string(b)); r.status != http.StatusOK {
					t.Fatalf("extend: %d %s", r.status, r.body)
				}
			}
			row.Program = withSymbols(t, f, path, row.Program)
			pr := f.do(t, "POST", path+"?mode=plan", "text/plain", row.Program)
			if row.Error != nil {
				checkMatrixError(t, row, pr)
				return
			}
			if pr.status != http.StatusOK {
				t.Fatalf("plan: %d %s", pr.status, pr.body)
			}
			if v := pr.json(t)["verdict"]; v != row.Verdict {
				t.Errorf("verdict %v, want %s (%v)", v, row.Verdict, pr.json(t)["summary"])
			}
			// force: review plans run without a dry-run commit ref, where the
			// server gates them.
			rr := f.do(t, "POST", path+"?force=true", "text/plain", row.Program, "Accept", "application/json")
			if row.RunError != "" {
				if rr.status < 400 || !strings.Contains(rr.body, row.RunError) {
					t.Fatalf("run: %d %s, want a refusal with %q", rr.status, rr.body, row.RunError)
				}
				return
			}
			if rr.status != http.StatusOK {
				t.Fatalf("run: %d %s", rr.status, rr.body)
			}
			var out struct {
				Results []struct {
					Label   string           `json:"label"`
					Columns []string         `json:"columns"`
					Rows    []map[string]any `json:"rows"`
					Count   int              `json:"count"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(rr.body), &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != len(row.Results) {
				var got []string
				for _, r := range out.Results {
					got = append(got, r.Label+":\n"+tsvOf(r.Columns, r.Rows))
				}
				t.Fatalf("%d results, want %d:\n%s", len(out.Results), len(row.Results), strings.Join(got, "\n"))
			}
			for i, want := range row.Results {
				got := out.Results[i]
				if want.Label != "" && got.Label != want.Label {
					t.Errorf("result %d label %q, want %q", i, got.Label, want.Label)
				}
				if want.Count != nil && got.Count != *want.Count {
					t.Errorf("result %d: %d rows, want %d", i, got.Count, *want.Count)
				}
				if want.TSV != "" {
					if g := tsvOf(got.Columns, got.Rows); g != want.TSV {
						t.Errorf("result %d rows:\n%s\nwant:\n%s", i, g, want.TSV)
					}
				}
			}
		})
	}
}

// withSymbols replaces <e:Entity> in a program with the session's symbol
// for tracker:Entity, so rows written with symbols do not depend on how
// much a first wave exposes.
func withSymbols(t *testing.T, f *fixture, path, program string) string {
	t.Helper()
	if !strings.Contains(program, "<e:") {
		return program
	}
	r := f.do(t, "GET", path, "", "")
	var info struct {
		Entities []string `json:"entities"`
	}
	if err := json.Unmarshal([]byte(r.body), &info); err != nil {
		t.Fatalf("session: %v %s", err, r.body)
	}
	for i, e := range info.Entities {
		name := strings.TrimPrefix(e, "tracker:")
		program = strings.ReplaceAll(program, "<e:"+name+">", "e"+strconv.Itoa(i+1))
	}
	if strings.Contains(program, "<e:") {
		t.Fatalf("unresolved symbol in %q (session entities %v)", program, info.Entities)
	}
	return program
}

func checkMatrixError(t *testing.T, row matrixRow, r httpResult) {
	t.Helper()
	want := row.Error
	status := want.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	if r.status < 400 {
		t.Fatalf("planned (%d), want error %s: %s", r.status, want.Code, r.body)
	}
	p := r.json(t)
	typ, _ := p["type"].(string)
	detail, _ := p["detail"].(string)
	hint, _ := p["hint"].(string)
	line, _ := p["line"].(float64)
	col, _ := p["column"].(float64)
	if r.status != status || !strings.HasSuffix(typ, "program-"+want.Code) || int(line) != want.Line || int(col) != want.Column ||
		!strings.Contains(detail, want.Message) || !strings.Contains(hint, want.Hint) {
		t.Errorf("got %d %s %v:%v %q hint %q\nwant %d program-%s %d:%d %q hint %q",
			r.status, typ, line, col, detail, hint, status, want.Code, want.Line, want.Column, want.Message, want.Hint)
	}
}

// tsvOf renders a JSON result as the TSV the matrix pins.
func tsvOf(cols []string, rows []map[string]any) string {
	var b strings.Builder
	b.WriteString(strings.Join(cols, "\t") + "\n")
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = cellText(r[c])
		}
		b.WriteString(strings.Join(cells, "\t") + "\n")
	}
	return b.String()
}

func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return fmt.Sprint(string(b))
}

// .page_size(n) answers n rows at a time and its handle resumes inside the
// backend page, then across backend pages, without losing or repeating a
// row.
func TestPageSizeContinues(t *testing.T) {
	f := newFixture(t, server.Config{})
	path := f.open(t, "tracker", "Issue")
	program := `Issue{project_id="prj-1"}.page_size(4)[id]`
	var all []string
	for range 10 {
		rr := f.do(t, "POST", path+"?force=true", "text/plain", program, "Accept", "application/json")
		if rr.status != http.StatusOK {
			t.Fatalf("%s: %d %s", program, rr.status, rr.body)
		}
		var out struct {
			Results []struct {
				Rows       []map[string]any `json:"rows"`
				PageHandle string           `json:"page_handle"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(rr.body), &out); err != nil {
			t.Fatal(err)
		}
		res := out.Results[0]
		if len(res.Rows) > 4 {
			t.Fatalf("%d rows in a page of 4", len(res.Rows))
		}
		for _, r := range res.Rows {
			all = append(all, r["id"].(string))
		}
		if res.PageHandle == "" {
			break
		}
		program = "page(" + res.PageHandle + ")"
	}
	full := f.runJSON(t, path, `Issue{project_id="prj-1"}[id]`)
	var want []string
	for _, r := range full[0]["rows"].([]any) {
		want = append(want, r.(map[string]any)["id"].(string))
	}
	if !slices.Equal(all, want) || len(want) < 9 {
		t.Fatalf("paged %v\nwhole %v", all, want)
	}
}

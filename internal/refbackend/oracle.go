package refbackend

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Program is a generated program in a structured form: the oracle answers
// it from the data, String renders it for plasmd.
type Program struct {
	Entity  string
	Preds   []Pred
	Pre     []Step // postfix steps before the hop
	Hop     string // relation name, or ""
	Post    []Step // postfix steps after the hop (or on the root)
	Project []string
	// Bind writes the query as a binding and the rest on the next line
	// (b = Post{…} ⏎ b.sort(…)…), which plans the steps as nodes over a
	// bound list rather than on the query itself.
	Bind bool
}

// Pred is one predicate in braces.
type Pred struct {
	Field, Op string
	Value     any // float64 or string
}

// Step is .sort(field[, desc]) or .limit(n).
type Step struct {
	Kind  string // "sort" or "limit"
	Field string
	Desc  bool
	N     int
}

type entityInfo struct {
	coll    string
	fields  []string
	params  []string // capability parameters (pushed to the backend)
	numeric map[string]bool
	hops    map[string]hopInfo
}

type hopInfo struct {
	target string
	// many: children whose childKey equals the parent's id; one: the
	// target whose id equals the parent's parentKey.
	many      bool
	childKey  string
	parentKey string
}

var entities = map[string]entityInfo{
	"Author": {"authors", []string{"id", "name", "country"}, []string{"id", "country"}, map[string]bool{"id": true},
		map[string]hopInfo{"posts": {target: "Post", many: true, childKey: "authorId"}}},
	"Post": {"posts", []string{"id", "title", "authorId", "views", "status"}, []string{"authorId", "status"}, map[string]bool{"id": true, "authorId": true, "views": true},
		map[string]hopInfo{"comments": {target: "Comment", many: true, childKey: "postId"}, "author": {target: "Author", parentKey: "authorId"}}},
	"Comment": {"comments", []string{"id", "postId", "body", "likes"}, []string{"postId"}, map[string]bool{"id": true, "postId": true, "likes": true}, nil},
}

// String renders p in plasmd's language.
func (p Program) String() string {
	var b strings.Builder
	if p.Bind {
		b.WriteString("b = ")
	}
	b.WriteString(p.Entity)
	if len(p.Preds) > 0 {
		parts := make([]string, len(p.Preds))
		for i, pr := range p.Preds {
			parts[i] = pr.Field + pr.Op + literal(pr.Value)
		}
		b.WriteString("{" + strings.Join(parts, ", ") + "}")
	}
	if p.Bind {
		b.WriteString("\nb")
	}
	writeSteps(&b, p.Pre)
	if p.Hop != "" {
		b.WriteString("." + p.Hop)
	}
	writeSteps(&b, p.Post)
	if len(p.Project) > 0 {
		b.WriteString("[" + strings.Join(p.Project, ",") + "]")
	}
	return b.String()
}

func literal(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return strconv.FormatFloat(v.(float64), 'f', -1, 64)
}

func writeSteps(b *strings.Builder, steps []Step) {
	for _, s := range steps {
		switch s.Kind {
		case "sort":
			if s.Desc {
				fmt.Fprintf(b, ".sort(%s, desc)", s.Field)
			} else {
				fmt.Fprintf(b, ".sort(%s)", s.Field)
			}
		case "limit":
			fmt.Fprintf(b, ".limit(%d)", s.N)
		}
	}
}

// Paged reports whether plasmd answers p a page at a time with handles:
// a query whose rows go out unchanged (backend predicates, projection).
func (p Program) Paged() bool {
	if p.Hop != "" || len(p.Pre)+len(p.Post) > 0 {
		return false
	}
	info := entities[p.Entity]
	for _, pr := range p.Preds {
		if pr.Op != "=" || !slices.Contains(info.params, pr.Field) {
			return false
		}
	}
	return true
}

// Answer is p's true answer over the full data set, rows as JSON objects.
func (d *Data) Answer(p Program) []map[string]any {
	rows := d.list(p.Entity, p.Preds)
	rows = applySteps(rows, p.Pre)
	ent := p.Entity
	if p.Hop != "" {
		h := entities[ent].hops[p.Hop]
		rows = d.hop(rows, h)
		ent = h.target
	}
	rows = applySteps(rows, p.Post)
	if len(p.Project) == 0 {
		return rows
	}
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		m := make(map[string]any, len(p.Project))
		for _, f := range p.Project {
			m[f] = r[f]
		}
		out[i] = m
	}
	return out
}

// MaxPages bounds the backend reads plasmd may need for p with pageSize
// rows per page: every list it may read, in full, plus one page each.
func (d *Data) MaxPages(p Program, pageSize int) int {
	pages := func(n int) int { return n/pageSize + 1 }
	root := d.list(p.Entity, pushable(p.Entity, p.Preds))
	total := pages(len(root))
	if p.Hop == "" {
		return total
	}
	parents := applySteps(d.list(p.Entity, p.Preds), p.Pre)
	h := entities[p.Entity].hops[p.Hop]
	for _, par := range parents {
		total += pages(len(d.hop([]map[string]any{par}, h)))
	}
	return total
}

func pushable(ent string, preds []Pred) []Pred {
	var out []Pred
	for _, pr := range preds {
		if pr.Op == "=" && slices.Contains(entities[ent].params, pr.Field) {
			out = append(out, pr)
		}
	}
	return out
}

func (d *Data) rowsOf(ent string) []map[string]any {
	switch ent {
	case "Author":
		return asRows(d.Authors)
	case "Post":
		return asRows(d.Posts)
	}
	return asRows(d.Comments)
}

func (d *Data) list(ent string, preds []Pred) []map[string]any {
	var out []map[string]any
	for _, r := range d.rowsOf(ent) {
		if !slices.ContainsFunc(preds, func(p Pred) bool { return !holds(r[p.Field], p.Op, p.Value) }) {
			out = append(out, r)
		}
	}
	return out
}

func (d *Data) hop(parents []map[string]any, h hopInfo) []map[string]any {
	all := d.rowsOf(h.target)
	var out []map[string]any
	if h.many {
		for _, par := range parents {
			for _, c := range all {
				if c[h.childKey] == par["id"] {
					out = append(out, c)
				}
			}
		}
		return out
	}
	seen := map[any]bool{}
	for _, par := range parents {
		k := par[h.parentKey]
		if seen[k] {
			continue
		}
		seen[k] = true
		for _, c := range all {
			if c["id"] == k {
				out = append(out, c)
			}
		}
	}
	return out
}

func holds(v any, op string, want any) bool {
	c := compare(v, want)
	switch op {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case ">":
		return c > 0
	case "<":
		return c < 0
	case ">=":
		return c >= 0
	case "<=":
		return c <= 0
	}
	panic("refbackend: unknown op " + op)
}

// compare orders numbers numerically and text by bytes, as plasmd does.
func compare(a, b any) int {
	fa, aok := a.(float64)
	fb, bok := b.(float64)
	if aok && bok {
		return cmp.Compare(fa, fb)
	}
	if aok != bok {
		if aok {
			return -1 // numbers sort before text
		}
		return 1
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func applySteps(rows []map[string]any, steps []Step) []map[string]any {
	rows = slices.Clone(rows)
	for _, s := range steps {
		switch s.Kind {
		case "sort":
			slices.SortStableFunc(rows, func(a, b map[string]any) int {
				c := compare(a[s.Field], b[s.Field])
				if s.Desc {
					return -c
				}
				return c
			})
		case "limit":
			if len(rows) > s.N {
				rows = rows[:s.N]
			}
		}
	}
	return rows
}

// Generate draws a program from r over d's values.
func GenerateProgram(r *rand.Rand, d *Data) Program {
	names := []string{"Author", "Post", "Post", "Comment"}
	p := Program{Entity: names[r.IntN(len(names))], Bind: r.IntN(4) == 0}
	info := entities[p.Entity]
	for range r.IntN(3) {
		p.Preds = append(p.Preds, genPred(r, d, p.Entity))
	}
	// Keep one predicate per pushed parameter: a parameter given twice is
	// refused by the planner.
	p.Preds = slices.CompactFunc(p.Preds, func(a, b Pred) bool { return a.Field == b.Field })
	ent := p.Entity
	if len(info.hops) > 0 && r.IntN(3) == 0 {
		hops := make([]string, 0, len(info.hops))
		for h := range info.hops {
			hops = append(hops, h)
		}
		slices.Sort(hops)
		p.Pre = genSteps(r, p.Entity)
		p.Hop = hops[r.IntN(len(hops))]
		ent = info.hops[p.Hop].target
	}
	p.Post = genSteps(r, ent)
	if r.IntN(2) == 0 {
		fields := slices.Clone(entities[ent].fields)
		r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		p.Project = fields[:1+r.IntN(len(fields))]
	}
	return p
}

func genSteps(r *rand.Rand, ent string) []Step {
	var out []Step
	fields := entities[ent].fields
	if r.IntN(2) == 0 {
		out = append(out, Step{Kind: "sort", Field: fields[r.IntN(len(fields))], Desc: r.IntN(2) == 0})
	}
	if r.IntN(2) == 0 {
		out = append(out, Step{Kind: "limit", N: 1 + r.IntN(25)})
	}
	if len(out) == 2 && r.IntN(3) == 0 {
		out[0], out[1] = out[1], out[0] // limit then sort
	}
	return out
}

func genPred(r *rand.Rand, d *Data, ent string) Pred {
	switch ent {
	case "Author":
		if r.IntN(2) == 0 {
			return Pred{"country", "=", Countries[r.IntN(len(Countries))]}
		}
		return Pred{"id", "=", float64(1 + r.IntN(NumAuthors))}
	case "Post":
		switch r.IntN(4) {
		case 0:
			return Pred{"authorId", "=", float64(1 + r.IntN(NumAuthors))}
		case 1:
			return Pred{"status", "=", Statuses[r.IntN(len(Statuses))]}
		case 2:
			return Pred{"views", []string{">", "<", ">=", "<="}[r.IntN(4)], float64(r.IntN(500))}
		}
		return Pred{"title", "!=", d.Posts[r.IntN(len(d.Posts))].Title}
	}
	if r.IntN(2) == 0 {
		return Pred{"postId", "=", float64(1 + r.IntN(NumPosts))}
	}
	return Pred{"likes", []string{">", "<", ">=", "<=", "="}[r.IntN(5)], float64(r.IntN(50))}
}

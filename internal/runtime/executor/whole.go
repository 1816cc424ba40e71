package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// Whole-list semantics. A program means the same thing whatever page size
// the backend chose: `.sort`, `.filter`, `.limit`, relation hops, hydration
// and for-each effects see every row of the lists they consume, so the
// executor follows a list's pages until the backend says it ended or the
// node's answer cannot change any more (a `.limit(n)` not preceded by a
// sort stops once n rows passed the filters before it). Only a list whose
// rows go to the client unchanged (a bare query, perhaps projected) answers
// one page at a time, with a handle for the rest.
//
// Everything a run reads is charged to its Budget. Reaching it fails the
// run with a BudgetError rather than answering from the rows read so far:
// a prefix must never be presented as the whole list.

// Budget bounds what one run may read: backend read calls (pages) and the
// rows they carry. The zero value means DefaultBudget.
type Budget struct {
	Pages int `json:"pages" yaml:"pages"`
	Rows  int `json:"rows" yaml:"rows"`
}

// DefaultBudget is the budget of a tenant that sets none.
func DefaultBudget() Budget { return Budget{Pages: 250, Rows: 10000} }

// Or returns b with its zero fields taken from d.
func (b Budget) Or(d Budget) Budget {
	if b.Pages <= 0 {
		b.Pages = d.Pages
	}
	if b.Rows <= 0 {
		b.Rows = d.Rows
	}
	return b
}

// ErrBudget means a run would read more than its budget allows.
var ErrBudget = errors.New("run budget exceeded")

// BudgetError says which budget a run reached, what it had read, and how to
// narrow the program. It matches ErrBudget.
type BudgetError struct {
	Budget Budget
	Kind   string // "pages" or "rows"
	Entity string // the list being read when the budget was reached
	Pages  int    // read calls made before stopping
	Rows   int    // rows read before stopping
	Need   int    // when known before reading: the calls the step needs
	// Limited: the read already stopped at its .limit(n) (no sort before
	// it), so narrowing means a smaller n, not dropping a sort.
	Limited bool
}

func (e *BudgetError) Error() string {
	limit := e.Budget.Pages
	if e.Kind == "rows" {
		limit = e.Budget.Rows
	}
	what := "reading " + e.Entity
	if e.Need > 0 {
		what = fmt.Sprintf("%s needs %d more calls:", what, e.Need)
	}
	narrow := "a smaller .limit(n) without .sort"
	if e.Limited {
		narrow = "a smaller n in its .limit(n) (the read already stops once the limit is filled)"
	}
	return fmt.Sprintf("%v: %s exceeds this run's budget of %d %s (read %d pages, %d rows before stopping); no partial list is returned. "+
		"Narrow the program: a predicate the backend filters on (%s{field=value}), %s, or a bare %s query read page by page with page(…)",
		ErrBudget, what, limit, e.Kind, e.Pages, e.Rows, e.Entity, narrow, e.Entity)
}

// Is makes errors.Is(err, ErrBudget) hold.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// meter charges one run's reads against its budget. It is shared by every
// node of the run.
type meter struct {
	mu    sync.Mutex
	b     Budget
	pages int
	rows  int
}

func newMeter(b Budget) *meter { return &meter{b: b.Or(DefaultBudget())} }

// reserve refuses, before any call, a step that needs n more read calls
// than the budget has left.
func (m *meter) reserve(n int, entity string) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pages+n > m.b.Pages {
		return &BudgetError{Budget: m.b, Kind: "pages", Entity: entity, Pages: m.pages, Rows: m.rows, Need: n}
	}
	return nil
}

// take charges one read call, refusing it when the budget is spent.
func (m *meter) take(entity string) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pages >= m.b.Pages {
		return &BudgetError{Budget: m.b, Kind: "pages", Entity: entity, Pages: m.pages, Rows: m.rows}
	}
	m.pages++
	return nil
}

// add charges rows read, failing once they pass the budget.
func (m *meter) add(rows int, entity string) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows += rows
	if m.rows > m.b.Rows {
		return &BudgetError{Budget: m.b, Kind: "rows", Entity: entity, Pages: m.pages, Rows: m.rows}
	}
	return nil
}

// pagedNodes reports, per node, whether it may answer one page of a list
// with a continuation: its own steps only project, and every node that
// consumes its rows is a projection that may answer one page too. Any other
// consumer (a sort, filter or limit, a hop, hydration, a for-each, an
// argument taken from its row) needs the whole list.
func pagedNodes(p *plan.Plan) []bool {
	consumers := make([][]int, len(p.Nodes))
	argSource := make([]bool, len(p.Nodes))
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.Input >= 0 && n.Input < len(p.Nodes) {
			consumers[n.Input] = append(consumers[n.Input], i)
		}
		for _, r := range n.ArgRefs {
			if r.Node >= 0 && r.Node < len(p.Nodes) {
				argSource[r.Node] = true
			}
		}
		computeSources(n, len(p.Nodes), argSource)
	}
	paged := make([]bool, len(p.Nodes))
	// Consumers come later in a valid plan's order, but plans come out of
	// a guest: iterate to a fixed point instead of trusting the order.
	for i := range paged {
		paged[i] = projectsOnly(&p.Nodes[i]) && !argSource[i] && p.Nodes[i].Semi == nil
	}
	for changed := true; changed; {
		changed = false
		for i := range p.Nodes {
			if !paged[i] {
				continue
			}
			for _, c := range consumers[i] {
				if p.Nodes[c].Op != plan.OpTransform || !paged[c] {
					paged[i], changed = false, true
					break
				}
			}
		}
	}
	return paged
}

func projectsOnly(n *plan.Node) bool {
	if len(n.Filters) > 0 {
		return false
	}
	for _, t := range n.Transforms {
		if t.Kind != plan.TProject {
			return false
		}
	}
	return true
}

// prefixLimit returns the filters before a node's first .limit and that
// limit's n, when no sort (or unknown step) comes first: the node's answer
// is then settled once n rows passed those filters. ok is false when the
// answer depends on every row.
func prefixLimit(filters []plan.Pred, trs []plan.Transform) (preds []plan.Pred, n int, ok bool) {
	preds = slices.Clone(filters)
	for _, tr := range trs {
		switch tr.Kind {
		case plan.TLimit:
			return preds, tr.N, tr.N >= 0
		case plan.TFilter:
			preds = append(preds, tr.Preds...)
		case plan.TProject:
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// rowsNeeded is how many leading rows of t yield n rows through preds, or
// -1 when t has fewer.
func rowsNeeded(t abi.Table, preds []plan.Pred, n int, d dateCols) (int, error) {
	if n == 0 {
		return 0, nil
	}
	dp, err := compileDatePreds(preds, d)
	if err != nil {
		return 0, err
	}
	cols := make([]int, len(preds))
	for i, p := range preds {
		if cols[i] = t.Col(p.Field); cols[i] < 0 {
			if len(t.Rows) == 0 {
				return -1, nil
			}
			return 0, fmt.Errorf("filter: no field %q in the rows read", p.Field)
		}
	}
	kept := 0
	for i, row := range t.Rows {
		keep := true
		for j, p := range preds {
			ok, err := dp.test(j, row[cols[j]], p, i)
			if err != nil {
				return 0, err
			}
			if !ok {
				keep = false
				break
			}
		}
		if keep {
			if kept++; kept == n {
				return i + 1, nil
			}
		}
	}
	return -1, nil
}

// listPage is where one page's rows start in a list read.
type listPage struct {
	state  map[string]any // the page's state (nil: the first page)
	start  int            // index of its first row kept in the table
	skip   int            // its rows skipped before that one
	before pageSeen       // ids of the page read before it (see OverlapError)
	keys   []string       // its rows' ids as read ("" for none; nil: no identity)
}

// listRead is the rows read from a list and where it continues.
type listRead struct {
	table abi.Table
	pages []listPage
	next  map[string]any // state of the page after the last one read; nil when the list ended
	last  pageSeen       // ids of the last page read
}

// resumeAt is where a list read resumes: the page's state, how many of its
// rows to skip, the ids of the page before it, and the ids of its rows
// already returned (when it resumes inside the page).
type resumeAt struct {
	state    map[string]any
	skip     int
	before   pageSeen
	returned []string
}

// after returns the position just past the first used rows. ok is false
// when the list has no rows after them.
func (l *listRead) after(used int) (resumeAt, bool) {
	if used >= len(l.table.Rows) {
		return resumeAt{state: l.next, before: l.last}, l.next != nil
	}
	for i := len(l.pages) - 1; i >= 0; i-- {
		if p := l.pages[i]; p.start <= used {
			skip := p.skip + used - p.start
			var returned []string
			if skip > 0 && p.keys != nil {
				returned = idsOf(p.keys[:min(skip, len(p.keys))], maxSeen)
			}
			return resumeAt{state: p.state, skip: skip, before: p.before, returned: returned}, true
		}
	}
	return resumeAt{skip: used}, true
}

// resume is where c continues.
func (c *Continuation) resume() resumeAt {
	return resumeAt{state: c.Page, skip: c.Skip, before: pageSeen{head: c.Seen, tail: c.SeenTail}, returned: c.Returned}
}

// set makes c continue at at.
func (c *Continuation) set(at resumeAt) {
	c.Page, c.Skip, c.Seen, c.SeenTail, c.Returned = at.state, at.skip, at.before.head, at.before.tail, at.returned
}

// readList reads a list from at (zero: its first page), skipping the rows
// of that page already returned, until the backend says it ended or enough
// (when set) reports how many of the rows read settle the answer (>= 0).
// at.before holds the row ids of the page before at's page (a
// continuation's), so a page that mostly repeats them is refused as the
// pages after it are. Every call is charged to the run's budget.
func (r *run) readList(ctx context.Context, entry, capability, entity string, vars map[string]any, at resumeAt, relation string, step *Step, enough func(abi.Table) (int, error)) (*listRead, int, error) {
	l := &listRead{last: at.before}
	state, skip, returned := at.state, at.skip, at.returned
	for first := true; ; first = false {
		if at, full, ok := extract.PastMax(state); ok {
			return nil, 0, &MaxPagesError{Capability: capability, Entity: entity, Counter: at, Full: full, Pages: len(l.pages), Rows: len(l.table.Rows)}
		}
		if err := r.meter.take(entity); err != nil {
			return nil, 0, err
		}
		dec, _, err := r.call(ctx, entry, capability, vars, state, relation, step)
		if err != nil {
			return nil, 0, err
		}
		// The page is compared as the backend returned it, by id (see
		// overlap): refused when mostly repeats, else its head already
		// returned (a shift by an insert) is skipped like rows returned.
		var ids []int
		if r.env.Identity != nil {
			for _, way := range r.env.Identity(entry, entity) {
				if ids = identity(dec.Table.Columns, way); ids != nil {
					break
				}
			}
		}
		keys := rowKeys(dec.Table.Rows, ids)
		rep, cmp, refuse, next := overlap(l.last, returned, keys, skip)
		if refuse {
			return nil, 0, &OverlapError{Capability: capability, Entity: entity, Page: len(l.pages) + 1, Repeated: rep, Rows: cmp}
		}
		rows := dec.Table.Rows
		if skip = next; skip >= len(rows) {
			skip, rows = len(rows), nil
		} else {
			rows = rows[skip:]
		}
		if first {
			l.table.Columns = dec.Table.Columns
		} else {
			rows = reorder(abi.Table{Columns: dec.Table.Columns, Rows: rows}, l.table.Columns)
		}
		l.pages = append(l.pages, listPage{state: state, start: len(l.table.Rows), skip: skip, before: l.last, keys: keys})
		if dec.Next != nil {
			l.last = seenOf(keys)
		}
		before := len(l.table.Rows)
		l.table.Rows = append(l.table.Rows, rows...)
		skip, returned, state, l.next = 0, nil, dec.Next, dec.Next
		used := -1
		if enough != nil {
			if used, err = enough(l.table); err != nil {
				return nil, 0, err
			}
		}
		// A read that its answer settles within this page is charged only
		// the rows the answer needed: the rest came with the page but the
		// program never uses them, and must not make it exceed the budget.
		charge := len(rows)
		if used >= 0 {
			charge = min(charge, max(0, used-before))
		}
		if err := r.meter.add(charge, entity); err != nil {
			return nil, 0, err
		}
		if used >= 0 {
			return l, used, nil
		}
		if state == nil {
			return l, len(l.table.Rows), nil
		}
	}
}

// onePage settles a read after its first page.
func onePage(t abi.Table) (int, error) { return len(t.Rows), nil }

// untilLimit settles a read once the node's leading .limit is filled, or
// never (nil) when its answer depends on every row.
func untilLimit(filters []plan.Pred, trs []plan.Transform, d dateCols) func(abi.Table) (int, error) {
	preds, n, ok := prefixLimit(filters, trs)
	if !ok {
		return nil
	}
	return func(t abi.Table) (int, error) { return rowsNeeded(t, preds, n, d) }
}

// fetch runs a read node: one page with a continuation when the node may
// answer by pages, else every page its answer needs.
func (r *run) fetch(ctx context.Context, n *plan.Node, step *Step) (abi.Table, *Continuation, error) {
	vars, err := r.vars(n)
	if err != nil {
		return abi.Table{}, nil, err
	}
	enough := onePage
	_, _, limited := prefixLimit(n.Filters, n.Transforms)
	if !r.paged[n.ID] {
		enough = untilLimit(n.Filters, n.Transforms, r.datesOf(n))
	}
	enough = pageSizeEnough(n.PageSize, r.paged[n.ID], enough)
	l, used, err := r.readList(ctx, n.EntryID, n.Capability, n.Entity, vars, resumeAt{}, "", step, enough)
	if limited {
		err = limitBound(err)
	}
	if n.Kind == catalog.KindGet {
		var t abi.Table
		if l != nil {
			t = l.table
		}
		err = notFound(n, t, err, r.keyOrder(n.EntryID, n.Entity))
	}
	if err != nil {
		return abi.Table{}, nil, err
	}
	if !r.paged[n.ID] {
		t, err := shape(l.table, n, r.datesOf(n))
		return t, nil, err
	}
	var next *Continuation
	if at, ok := l.after(used); ok {
		next = &Continuation{EntryID: n.EntryID, Entity: n.Entity, Capability: n.Capability, Columns: n.Columns, Vars: vars, Filters: n.Filters, Transforms: n.Transforms, PageSize: n.PageSize}
		next.set(at)
	}
	cutToPage(l, used, n.PageSize)
	t, err := shape(l.table, n, r.datesOf(n))
	return t, next, err
}

// page continues a handle: one page, or with limit=n the next n rows from
// as many pages as that takes (continuing mid-page when n ends inside
// one), or every remaining row when the node's consumers need the whole
// list.
func (r *run) page(ctx context.Context, n *plan.Node, step *Step) (abi.Table, *Continuation, error) {
	if r.env.ResolvePage == nil || n.Page == nil {
		return abi.Table{}, nil, errors.New("paging handles are not available in this session")
	}
	c, err := r.env.ResolvePage(n.Page.Handle)
	if err != nil {
		return abi.Table{}, nil, err
	}
	if c == nil {
		return abi.Table{}, nil, fmt.Errorf("paging handle %s has no continuation", n.Page.Handle)
	}
	view := &plan.Node{Filters: c.Filters, Transforms: c.Transforms}
	dates := r.entityDates(c.EntryID, c.Entity)
	if n.Page.Limit > 0 {
		view.Transforms = append(slices.Clone(c.Transforms), plan.Transform{Kind: plan.TLimit, N: n.Page.Limit})
	}
	enough := onePage
	switch {
	case !r.paged[n.ID]:
		enough = untilLimit(view.Filters, view.Transforms, dates)
	case n.Page.Limit > 0:
		if enough = untilLimit(view.Filters, view.Transforms, dates); enough == nil {
			enough = onePage // a continuation of a sorted view (older handles)
		}
	}
	enough = pageSizeEnough(c.PageSize, r.paged[n.ID] && n.Page.Limit <= 0, enough)
	l, used, err := r.readList(ctx, c.EntryID, c.Capability, c.Entity, c.Vars, c.resume(), "", step, enough)
	if err != nil {
		return abi.Table{}, nil, err
	}
	var next *Continuation
	if at, ok := l.after(used); ok && r.paged[n.ID] {
		nc := *c
		nc.set(at)
		next = &nc
	}
	cutToPage(l, used, c.PageSize)
	t, limited, err := shapeLimited(l.table, view, dates)
	if err != nil {
		return abi.Table{}, nil, err
	}
	if limited && n.Page.Limit <= 0 {
		next = nil // an older handle whose own .limit cut rows: continuing would skip them
	}
	t, err = shape(t, n, dates.afterAll(view.Transforms))
	return t, next, err
}

// hopParents returns the parent rows a hop calls its capability for: every
// row, except that a cardinality-one relation (DistinctBy) reads each
// distinct key once, since parents sharing a target yield it once anyway.
func hopParents(n *plan.Node, parents abi.Table) ([]int, error) {
	out := make([]int, 0, len(parents.Rows))
	if n.Hop.DistinctBy == "" {
		for i := range parents.Rows {
			out = append(out, i)
		}
		return out, nil
	}
	cols := make([]int, len(n.Hop.Binds))
	for j, b := range n.Hop.Binds {
		if cols[j] = parents.Col(b.Field); cols[j] < 0 {
			return nil, fmt.Errorf("relation %s: parent rows have no field %q", n.Hop.Relation, b.Field)
		}
	}
	seen := make(map[string]bool, len(parents.Rows))
	for i, row := range parents.Rows {
		var key []byte
		for _, c := range cols {
			// The type is part of the key: 1 and "1" are different ids.
			key = fmt.Appendf(key, "%T\x00%v\x01", row[c], row[c])
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, i)
		}
	}
	return out, nil
}

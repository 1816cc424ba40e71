package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	cliptext "github.com/plasmd/plasmd/internal/text"
)

// Dates: a field a catalog types `date` holds instants, and the host
// compares them as instants, never as the text the backend wrote. As text,
// "2025-03-20T11:00:00Z" sorts before "2025-03-20T12:00:00+02:00" although
// it is an hour later, and "…46.250Z" differs from "…46.25Z", the same
// instant: filters kept or dropped the wrong rows with no error. Filters,
// .sort, min/max, group_by keys and dedupe all compare dates here. A value
// that is not a date in its field's format is refused, naming the field
// and the row, rather than compared some other way.

// ErrNotDate means a cell or a literal compared as a date does not parse
// as one in its field's format.
var ErrNotDate = errors.New("not a date")

// Date value formats (catalog `value_format`); "" is a date the catalog
// gives no format for, read as text.
const (
	DateRFC3339 = "rfc3339"
	DateOnly    = "iso8601_date"
	DateUnixMS  = "unix_ms"
	DateUnixSec = "unix_sec"
)

// dateCols maps the date columns of a table to their value format. Nil
// (no lookup, or no date column) compares every column as before.
type dateCols map[string]string

// The textual dates accepted in every format (parseDateText): RFC 3339
// (T or a space before the time; the offset as Z, +hh:mm or +hhmm, the
// last as Jira and the NYT write it), a date and time without an offset
// (UTC), and a date alone (its midnight, UTC). They are the literals the
// planner accepts in a date slot (lang.dateLayouts) plus those spellings.

// maxDateText bounds the text parsed as a date (the longest layout with
// nine fraction digits is 35 bytes); longer text is not a date.
const maxDateText = 64

// Unix times beyond these (years 1 and 9999) are refused rather than
// overflowing time.Time's arithmetic.
const (
	minUnixSec = -62135596800
	maxUnixSec = 253402300799
)

// parseDate reads v as an instant in format. Unix formats take a whole or
// decimal number (also as text, as some APIs send them) and, for a
// literal written as a date, the text layouts; the other formats take text
// only.
func parseDate(v any, format string) (time.Time, error) {
	unix := format == DateUnixMS || format == DateUnixSec
	var num string
	switch x := v.(type) {
	case string:
		if unix && isDecimal(x) {
			num = x
			break
		}
		return parseDateText(x)
	case int64:
		num = strconv.FormatInt(x, 10)
	case int:
		num = strconv.Itoa(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return time.Time{}, ErrNotDate
		}
		num = strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		num = x.String()
	default:
		return time.Time{}, ErrNotDate
	}
	if !unix {
		// A number in a textual date field: its unit is unknown.
		return time.Time{}, ErrNotDate
	}
	return parseUnix(num, format == DateUnixMS)
}

func parseDateText(s string) (time.Time, error) {
	if len(s) > maxDateText || len(s) < len("2006-01-02") {
		return time.Time{}, ErrNotDate
	}
	// One layout, chosen from the text's shape: trying each in turn made
	// every date-only cell fail four parses (each allocating its error)
	// before the fifth, 35x the cost of comparing the text.
	if len(s) == len("2006-01-02") {
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return time.Time{}, ErrNotDate
		}
		return t, nil
	}
	offset := 0 // none; 1: Z or ±hh:mm; 2: ±hhmm, as Jira and the NYT send it
	switch n := len(s); {
	case s[n-1] == 'Z' || (n > 6 && (s[n-6] == '+' || s[n-6] == '-') && s[n-3] == ':'):
		offset = 1
	case n > 5 && (s[n-5] == '+' || s[n-5] == '-') && !strings.ContainsAny(s[n-4:], ":.-+"):
		offset = 2
	}
	var layout string
	switch s[10] {
	case 'T':
		layout = [...]string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"}[offset]
	case ' ':
		layout = [...]string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z0700"}[offset]
	default:
		return time.Time{}, ErrNotDate
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, ErrNotDate
	}
	return t, nil
}

// unsetDate reports whether a date cell holds no date: null, or the empty
// text some APIs send for an unset date.
func unsetDate(v any) bool {
	s, isText := v.(string)
	return v == nil || (isText && s == "")
}

// isDecimal reports whether s is an optionally signed decimal number
// without an exponent (digits, at most one point, a digit somewhere).
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" {
		return false
	}
	for _, part := range []string{ip, fp} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

// parseUnix reads a Unix time in seconds or milliseconds, exactly: the
// fraction is kept to the nanosecond (digits beyond are cut), so 1.5 s and
// 1500 ms are the same instant. An exponent form (a JSON 1.7e9) is read
// through a float, exact for the whole seconds it can name.
func parseUnix(s string, ms bool) (time.Time, error) {
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.Abs(f) > 1e18 {
			return time.Time{}, ErrNotDate
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if !isDecimal(s) {
		return time.Time{}, ErrNotDate
	}
	neg := strings.HasPrefix(s, "-")
	ip, fp, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	ip = strings.TrimLeft(ip, "0")
	if len(ip) > 16 {
		return time.Time{}, ErrNotDate
	}
	whole := int64(0)
	if ip != "" {
		var err error
		if whole, err = strconv.ParseInt(ip, 10, 64); err != nil {
			return time.Time{}, ErrNotDate
		}
	}
	// fraction in nanoseconds of the unit's remainder
	scale := 9 // digits of a second's fraction in ns
	if ms {
		scale = 6 // digits of a millisecond's fraction in ns
	}
	if len(fp) > scale {
		fp = fp[:scale]
	}
	frac := int64(0)
	if fp != "" {
		frac, _ = strconv.ParseInt(fp+strings.Repeat("0", scale-len(fp)), 10, 64)
	}
	sec, nsec := whole, frac
	if ms {
		sec, nsec = whole/1000, (whole%1000)*int64(time.Millisecond)+frac
	}
	if neg {
		sec, nsec = -sec, -nsec
	}
	if sec < minUnixSec || sec > maxUnixSec {
		return time.Time{}, ErrNotDate
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// formatName names a format in messages.
func formatName(format string) string {
	if format == "" {
		return "a date as text"
	}
	return format
}

func quoteCell(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(cliptext.Clip(s, 80))
	}
	return cliptext.Clip(Text(v), 80)
}

// cellErrFmt is the refusal of a cell that is not a date, naming the row
// (1 based, in the rows compared) as sum() does for a cell not a number.
func cellErrFmt(what, field, format string, row int, v any) error {
	return fmt.Errorf("%s: %w: row %d holds %s in %s, which is declared a date (%s)", what, ErrNotDate, row+1,
		quoteCell(v), field, formatName(format))
}

// datePred is a filter predicate on a date column, its literal parsed once.
type datePred struct {
	field, format, op string
	lit               any         // the literal as written (for messages)
	wants             []time.Time // one, or the list of an equality with a list
	null              bool        // the literal is null: compared as before
}

// datePreds is aligned with a filter's predicates: nil where a predicate
// is not on a date column (or is a text match, ~, which matches text).
type datePreds []*datePred

// compileDatePreds parses the literals of preds on date columns. A literal
// that is not a date is refused naming the field and the value (the
// planner refuses most with a line and column; computed columns reach
// here unchecked).
func compileDatePreds(preds []plan.Pred, d dateCols) (datePreds, error) {
	if len(d) == 0 {
		return nil, nil
	}
	var out datePreds
	for i, p := range preds {
		format, ok := d[p.Field]
		if !ok || p.Op == "~" {
			continue
		}
		dp := &datePred{field: p.Field, format: format, op: p.Op, lit: p.Value, null: p.Value == nil}
		vals := []any{p.Value}
		if l, ok := p.Value.([]any); ok && (p.Op == "=" || p.Op == "!=") {
			vals = l
		}
		for _, v := range vals {
			if dp.null {
				break
			}
			if v == nil {
				continue // a null in a list matches only a null cell, which test leaves to match
			}
			t, err := parseDate(v, format)
			if err != nil {
				return nil, fmt.Errorf("filter %s%s%s: %w: %s is not a date (%s); write one like \"2024-05-01\" or \"2024-05-01T12:00:00Z\"",
					p.Field, p.Op, quoteCell(p.Value), ErrNotDate, quoteCell(v), formatName(format))
			}
			dp.wants = append(dp.wants, t)
		}
		if out == nil {
			out = make(datePreds, len(preds))
		}
		out[i] = dp
	}
	return out, nil
}

// test is match with predicate j compared as a date when it is one; row
// is the cell's row (for the refusal of a cell that is not a date).
func (dp datePreds) test(j int, v any, p plan.Pred, row int) (bool, error) {
	if j < len(dp) && dp[j] != nil && unsetDate(v) {
		v = nil
	}
	if j >= len(dp) || dp[j] == nil || dp[j].null || v == nil {
		// Null on either side keeps its meaning (=null, !=null; a
		// missing cell passes no ordering).
		return match(v, p.Op, p.Value), nil
	}
	return dp[j].match(v, row)
}

func (d *datePred) match(v any, row int) (bool, error) {
	t, err := parseDate(v, d.format)
	if err != nil {
		return false, cellErrFmt("filter "+d.field+d.op+quoteCell(d.lit), d.field, d.format, row, v)
	}
	switch d.op {
	case "=", "!=":
		eq := slices.ContainsFunc(d.wants, t.Equal)
		return eq == (d.op == "="), nil
	}
	c := t.Compare(d.wants[0])
	switch d.op {
	case ">":
		return c > 0, nil
	case "<":
		return c < 0, nil
	case ">=":
		return c >= 0, nil
	case "<=":
		return c <= 0, nil
	}
	return false, fmt.Errorf("filter on %s: unknown operator %q", d.field, d.op)
}

// dateCells parses column c of rows as dates; ok[i] is false for a null
// cell. A cell that is not a date is refused.
func dateCells(what, field, format string, rows [][]any, c int) ([]time.Time, []bool, error) {
	ts, ok := make([]time.Time, len(rows)), make([]bool, len(rows))
	for i, row := range rows {
		if unsetDate(row[c]) {
			continue
		}
		t, err := parseDate(row[c], format)
		if err != nil {
			return nil, nil, cellErrFmt(what, field, format, i, row[c])
		}
		ts[i], ok[i] = t, true
	}
	return ts, ok, nil
}

// sortDates orders rows by the instant in column c (stable; nulls last in
// either direction, as sortOrder has them).
func sortDates(rows [][]any, c int, field, format string, desc bool) ([][]any, error) {
	ts, ok, err := dateCells("sort("+field+")", field, format, rows, c)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case !ok[a] && !ok[b]:
			return 0
		case !ok[a]:
			return 1
		case !ok[b]:
			return -1
		}
		r := ts[a].Compare(ts[b])
		if desc {
			return -r
		}
		return r
	})
	out := make([][]any, len(rows))
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out, nil
}

// minMaxDate is min/max over a date column: the cell (as the backend wrote
// it) holding the earliest or latest instant; the first of equal ones.
func minMaxDate(a plan.Agg, rows [][]any, c int, format string) (any, error) {
	ts, ok, err := dateCells(a.Fn+"("+a.Field+")", a.Field, format, rows, c)
	if err != nil {
		return nil, err
	}
	best := -1
	for i := range rows {
		if !ok[i] {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		d := ts[i].Compare(ts[best])
		if a.Fn == plan.AggMin && d < 0 || a.Fn == plan.AggMax && d > 0 {
			best = i
		}
	}
	if best < 0 {
		return nil, nil
	}
	return rows[best][c], nil
}

// dateKey identifies a date cell by its instant, for group_by and dedupe:
// two spellings of one instant are one key. Its type keeps it apart from
// every other key kind.
type dateKey struct {
	sec  int64
	nsec int
}

func keyOfDate(v any, format string) (dateKey, error) {
	t, err := parseDate(v, format)
	if err != nil {
		return dateKey{}, err
	}
	return dateKey{t.Unix(), t.Nanosecond()}, nil
}

// cellKey is groupKey for column field, by instant when it is a date.
func (d dateCols) cellKey(what, field string, row int, v any) (any, error) {
	format, isDate := d[field]
	if isDate && unsetDate(v) {
		return groupKey(nil), nil
	}
	if !isDate {
		return groupKey(v), nil
	}
	k, err := keyOfDate(v, format)
	if err != nil {
		return nil, cellErrFmt(what, field, format, row, v)
	}
	return k, nil
}

// after is the date columns of what tr makes of rows with columns d.
func (d dateCols) after(tr plan.Transform) dateCols {
	if len(d) == 0 {
		return nil
	}
	switch tr.Kind {
	case plan.TLimit, plan.TSort, plan.TFilter, plan.TSingleton, plan.TDedupe:
		return d
	case plan.TProject:
		out := dateCols{}
		for _, f := range tr.Fields {
			if format, ok := d[f]; ok {
				out[f] = format
			}
		}
		return out
	case plan.TAggregate, plan.TGroupBy:
		out := dateCols{}
		if format, ok := d[tr.Field]; ok && tr.Kind == plan.TGroupBy {
			out[tr.Field] = format
		}
		for _, a := range tr.Aggs {
			if format, ok := d[a.Field]; ok && (a.Fn == plan.AggMin || a.Fn == plan.AggMax) {
				out[a.Name] = format
			}
		}
		return out
	case plan.TDerive:
		out := dateCols{}
		for _, c := range tr.Derive {
			if format, ok := d[c.Field]; ok && c.Field != "" {
				out[c.Name] = format
			}
		}
		return out
	}
	return nil
}

// afterAll is d after every transform of trs.
func (d dateCols) afterAll(trs []plan.Transform) dateCols {
	for _, tr := range trs {
		d = d.after(tr)
	}
	return d
}

// nodeDates is, per node, the date columns of the rows its filters and
// transforms see: its entity's date fields (Env.Dates), or for a transform
// over computed rows (no entity) what its input node made of its own.
func nodeDates(nodes []plan.Node, lookup func(entryID, entity string) map[string]string) []dateCols {
	if lookup == nil {
		return nil
	}
	out := make([]dateCols, len(nodes))
	done := make([]bool, len(nodes))
	var in func(i, depth int) dateCols
	in = func(i, depth int) dateCols {
		if done[i] {
			return out[i]
		}
		n := &nodes[i]
		var d dateCols
		switch {
		case n.Op == plan.OpText:
		case n.Entity != "":
			d = lookup(n.EntryID, n.Entity)
		case n.Op == plan.OpTransform && n.Input >= 0 && n.Input < len(nodes) && n.Input != i && depth < len(nodes):
			d = in(n.Input, depth+1).afterAll(nodes[n.Input].Transforms)
		}
		out[i], done[i] = d, true
		return d
	}
	// Only nodes that filter or transform rows ask (with the inputs of
	// computed rows, through in): most nodes of most runs compare nothing.
	for i := range nodes {
		if len(nodes[i].Filters)+len(nodes[i].Transforms) > 0 {
			in(i, 0)
		}
	}
	return out
}

// datesOf is the date columns node n's filters and transforms see.
func (r *run) datesOf(n *plan.Node) dateCols {
	if n.ID >= 0 && n.ID < len(r.dates) {
		return r.dates[n.ID]
	}
	return nil
}

// entityDates is the date columns of an entity's rows (a continuation's).
func (r *run) entityDates(entryID, entity string) dateCols {
	if r.env.Dates == nil || entity == "" {
		return nil
	}
	return r.env.Dates(entryID, entity)
}

// sortRows is the .sort transform: by instant on a date column, else by
// sortOrder.
func sortRows(t abi.Table, tr plan.Transform, d dateCols) ([][]any, error) {
	c := t.Col(tr.Field)
	if c < 0 {
		return nil, fmt.Errorf("sort: no field %q in %s", tr.Field, strings.Join(t.Columns, ", "))
	}
	if format, ok := d[tr.Field]; ok {
		return sortDates(t.Rows, c, tr.Field, format, tr.Desc)
	}
	rows := slices.Clone(t.Rows)
	slices.SortStableFunc(rows, func(a, b []any) int { return sortOrder(a[c], b[c], tr.Desc) })
	return rows, nil
}

package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

func TestParseDate(t *testing.T) {
	utc := func(s string) time.Time {
		tt, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	tests := []struct {
		v      any
		format string
		want   string // RFC 3339 instant, or "" for ErrNotDate
	}{
		{"2017-11-04T18:48:46.250Z", DateRFC3339, "2017-11-04T18:48:46.25Z"},
		{"2017-11-04T18:48:46.25Z", DateRFC3339, "2017-11-04T18:48:46.25Z"},
		{"2017-11-04T20:48:46.25+02:00", DateRFC3339, "2017-11-04T18:48:46.25Z"},
		{"2017-11-04 18:48:46Z", DateRFC3339, "2017-11-04T18:48:46Z"},
		{"2017-11-04T18:48:46", DateRFC3339, "2017-11-04T18:48:46Z"},
		{"2017-11-04", DateRFC3339, "2017-11-04T00:00:00Z"},
		// Jira and the NYT write the offset without its colon.
		{"2019-02-14T10:01:41.843+0000", DateRFC3339, "2019-02-14T10:01:41.843Z"},
		{"2019-09-30T22:30:41+0000", DateOnly, "2019-09-30T22:30:41Z"},
		{"2019-09-30T17:30:41-0500", DateRFC3339, "2019-09-30T22:30:41Z"},
		{"2019-09-30 22:30:41+0000", DateRFC3339, "2019-09-30T22:30:41Z"},
		{"2019-09-30T22:30:41.5", DateRFC3339, "2019-09-30T22:30:41.5Z"},
		{"2019-09-30X22:30:41", DateRFC3339, ""},
		{"2019-09-30T22:30", DateRFC3339, ""},
		{"2017-11-04", DateOnly, "2017-11-04T00:00:00Z"},
		{"2017-11-04", "", "2017-11-04T00:00:00Z"},
		{int64(1509821326), DateUnixSec, "2017-11-04T18:48:46Z"},
		{json.Number("1509821326.25"), DateUnixSec, "2017-11-04T18:48:46.25Z"},
		{"1509821326250", DateUnixMS, "2017-11-04T18:48:46.25Z"},
		{json.Number("1509821326250"), DateUnixMS, "2017-11-04T18:48:46.25Z"},
		{json.Number("1.50982132625e12"), DateUnixMS, "2017-11-04T18:48:46.25Z"},
		{float64(1509821326.5), DateUnixSec, "2017-11-04T18:48:46.5Z"},
		{int64(-1000), DateUnixMS, "1969-12-31T23:59:59Z"},
		{"2017-11-04T18:48:46Z", DateUnixMS, "2017-11-04T18:48:46Z"}, // a literal written as a date
		{"seven", DateRFC3339, ""},
		{"", DateRFC3339, ""},
		{"2017-13-04", DateRFC3339, ""},
		{"2017-11-04T25:00:00Z", DateRFC3339, ""},
		{int64(1509821326), DateRFC3339, ""}, // a number's unit is unknown in a textual date
		{json.Number("1"), "", ""},
		{true, DateUnixSec, ""},
		{"12.5.3", DateUnixSec, ""},
		{"-", DateUnixSec, ""},
		{".", DateUnixSec, ""},
		{json.Number("1e300"), DateUnixSec, ""},
		{int64(1) << 62, DateUnixSec, ""},
		{"99999999999999999999", DateUnixMS, ""},
		{strings.Repeat("2", 100), DateRFC3339, ""},
		{[]any{"2017-11-04"}, DateRFC3339, ""},
	}
	for _, tt := range tests {
		got, err := parseDate(tt.v, tt.format)
		if tt.want == "" {
			if !errors.Is(err, ErrNotDate) {
				t.Errorf("parseDate(%#v, %q) = %v, %v; want ErrNotDate", tt.v, tt.format, got, err)
			}
			continue
		}
		if err != nil || !got.Equal(utc(tt.want)) {
			t.Errorf("parseDate(%#v, %q) = %v, %v; want %s", tt.v, tt.format, got, err, tt.want)
		}
	}
}

// characters is Plasm's rickandmorty shape: every row created at one
// instant, written with a trailing zero in its fraction.
func characters(n int) abi.Table {
	t := abi.Table{Columns: []string{"id", "created"}}
	for i := range n {
		t.Rows = append(t.Rows, []any{int64(i + 1), "2017-11-04T18:48:46.250Z"})
	}
	return t
}

// issues is the demo tracker's shape around the repro's instant
// (2025-03-20T12:00:00+02:00 = 10:00Z).
func issues() abi.Table {
	return abi.Table{Columns: []string{"id", "created_at"}, Rows: [][]any{
		{"iss-1", "2025-03-20T09:00:00Z"},
		{"iss-2", "2025-03-20T10:00:00Z"},
		{"iss-3", "2025-03-20T11:00:00Z"}, // before "…T12:00:00+02:00" as text
		{"iss-4", "2025-03-21T08:00:00Z"},
		{"iss-5", nil},
	}}
}

// TestDateFilterRepros: the tester's findings. As text every one of them
// answered wrongly with no error.
func TestDateFilterRepros(t *testing.T) {
	rm := dateCols{"created": DateRFC3339}
	tr := dateCols{"created_at": DateRFC3339}
	tests := []struct {
		in    abi.Table
		d     dateCols
		preds []plan.Pred
		want  int
	}{
		{characters(65), rm, []plan.Pred{{Field: "created", Op: ">", Value: "2017-11-04T18:48:46Z"}}, 65},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: ">=", Value: "2017-11-04T18:48:46.25Z"}}, 65},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: ">", Value: "2017-11-04T20:00:00+02:00"}}, 65},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: "=", Value: "2017-11-04T18:48:46.25Z"}}, 65},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: "!=", Value: "2017-11-04T20:48:46.25+02:00"}}, 0},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: "<=", Value: "2017-11-04T18:48:46.25Z"}}, 65},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: "<", Value: "2017-11-04"}}, 0},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: "=", Value: []any{"2001-01-01", "2017-11-04T18:48:46.25Z"}}}, 65},
		{characters(65), rm, []plan.Pred{{Field: "created", Op: "~", Value: "250Z"}}, 65}, // ~ matches text
		{characters(65), rm, []plan.Pred{{Field: "created", Op: "=", Value: []any{nil, "2017-11-04T18:48:46.25Z"}}}, 65},
		{issues(), tr, []plan.Pred{{Field: "created_at", Op: "=", Value: []any{nil, "2025-03-20T10:00:00.0Z"}}}, 1}, // a null cell matches no list, as before
		{issues(), tr, []plan.Pred{{Field: "created_at", Op: ">", Value: "2025-03-20T12:00:00+02:00"}}, 2},
		{issues(), tr, []plan.Pred{{Field: "created_at", Op: "<=", Value: "2025-03-20T12:00:00+02:00"}}, 2},
		{issues(), tr, []plan.Pred{{Field: "created_at", Op: "=", Value: nil}}, 1},
		{issues(), tr, []plan.Pred{{Field: "created_at", Op: "!=", Value: nil}}, 4},
		{issues(), tr, []plan.Pred{{Field: "created_at", Op: "!=", Value: "2025-03-20T12:00:00+02:00"}}, 4},
	}
	for _, tt := range tests {
		got, err := applyFilters(tt.in, tt.preds, tt.d)
		if err != nil || len(got.Rows) != tt.want {
			t.Errorf("%+v: %d rows, %v; want %d", tt.preds, len(got.Rows), err, tt.want)
		}
	}
	// Without date columns the old comparison is unchanged (text here).
	got, err := applyFilters(characters(3), []plan.Pred{{Field: "created", Op: ">", Value: "2017-11-04T18:48:46Z"}}, nil)
	if err != nil || len(got.Rows) != 0 {
		t.Errorf("untyped: %d rows, %v", len(got.Rows), err)
	}
}

// TestDateUnixFormats: unix_ms and unix_sec cells (numbers, or digits as
// text) compare as instants with literals written either way.
func TestDateUnixFormats(t *testing.T) {
	in := abi.Table{Columns: []string{"id", "ms", "sec"}, Rows: [][]any{
		{1, json.Number("1509821326250"), int64(1509821326)},
		{2, "1509821327000", json.Number("1509821327")},
		{3, json.Number("999"), int64(0)},
	}}
	d := dateCols{"ms": DateUnixMS, "sec": DateUnixSec}
	tests := []struct {
		pred plan.Pred
		want int
	}{
		{plan.Pred{Field: "ms", Op: ">", Value: "2017-11-04T18:48:46Z"}, 2},
		{plan.Pred{Field: "ms", Op: "=", Value: int64(1509821326250)}, 1},
		{plan.Pred{Field: "ms", Op: ">", Value: int64(1509821326249)}, 2},
		{plan.Pred{Field: "ms", Op: "<", Value: "1000"}, 1},
		{plan.Pred{Field: "sec", Op: ">=", Value: int64(1509821326)}, 2},
		{plan.Pred{Field: "sec", Op: "=", Value: "2017-11-04T18:48:47Z"}, 1},
		{plan.Pred{Field: "sec", Op: "<", Value: "1970-01-01T00:00:01Z"}, 1},
	}
	for _, tt := range tests {
		got, err := applyFilters(in, []plan.Pred{tt.pred}, d)
		if err != nil || len(got.Rows) != tt.want {
			t.Errorf("%+v: %d rows, %v; want %d", tt.pred, len(got.Rows), err, tt.want)
		}
	}
}

// TestDateRefusals: a cell or literal that is not a date is refused,
// naming the field, the row and the value, in every comparison; nothing
// falls back to text.
func TestDateRefusals(t *testing.T) {
	bad := abi.Table{Columns: []string{"id", "created"}, Rows: [][]any{
		{1, "2017-11-04T18:48:46Z"},
		{2, "seven"},
	}}
	d := dateCols{"created": DateRFC3339}
	run := func(name string, f func() error) {
		t.Helper()
		err := f()
		if !errors.Is(err, ErrNotDate) || !strings.Contains(err.Error(), `row 2 holds "seven" in created`) {
			t.Errorf("%s: %v; want a refusal naming row 2 and created", name, err)
		}
	}
	run("filter", func() error {
		_, err := applyFilters(bad, []plan.Pred{{Field: "created", Op: ">", Value: "2001-01-01"}}, d)
		return err
	})
	run("equality", func() error {
		_, err := applyFilters(bad, []plan.Pred{{Field: "created", Op: "=", Value: "2001-01-01"}}, d)
		return err
	})
	run("sort", func() error {
		_, err := shape(bad, &plan.Node{Transforms: []plan.Transform{{Kind: plan.TSort, Field: "created"}}}, d)
		return err
	})
	for _, fn := range []string{plan.AggMin, plan.AggMax} {
		run(fn, func() error {
			_, err := applyCompute(bad, plan.Transform{Kind: plan.TAggregate, Aggs: []plan.Agg{{Name: "x", Fn: fn, Field: "created"}}}, d)
			return err
		})
	}
	run("group_by", func() error {
		_, err := applyCompute(bad, plan.Transform{Kind: plan.TGroupBy, Field: "created", Aggs: []plan.Agg{{Name: "n", Fn: plan.AggCount}}}, d)
		return err
	})
	run("dedupe", func() error {
		_, err := applyCompute(bad, plan.Transform{Kind: plan.TDedupe, Fields: []string{"created"}}, d)
		return err
	})
	run("limit read", func() error {
		_, err := untilLimit([]plan.Pred{{Field: "created", Op: ">", Value: "2001-01-01"}}, []plan.Transform{{Kind: plan.TLimit, N: 5}}, d)(bad)
		return err
	})
	run("hop count", func() error {
		_, err := countMatching(bad, []plan.Pred{{Field: "created", Op: ">", Value: "2001-01-01"}}, 0, d)
		return err
	})
	// A literal that is not a date (a computed column the planner does
	// not type-check) names the field and the value.
	_, err := applyFilters(bad, []plan.Pred{{Field: "created", Op: ">", Value: "yesterday"}}, d)
	if !errors.Is(err, ErrNotDate) || !strings.Contains(err.Error(), `"yesterday" is not a date`) || !strings.Contains(err.Error(), "created") {
		t.Errorf("bad literal: %v", err)
	}
}

// TestDateOrdering: sort, min/max, group_by and dedupe go by instant.
func TestDateOrdering(t *testing.T) {
	in := abi.Table{Columns: []string{"id", "at"}, Rows: [][]any{
		{"a", "2025-03-20T11:00:00Z"},
		{"b", "2025-03-20T12:00:00+02:00"}, // 10:00Z, first as text after a
		{"c", nil},
		{"d", "2025-03-20T10:00:00.000Z"}, // b's instant
		{"e", "2025-03-19"},
	}}
	d := dateCols{"at": DateRFC3339}
	ids := func(t abi.Table) string {
		var s []string
		for _, r := range t.Rows {
			s = append(s, fmt.Sprint(r[0]))
		}
		return strings.Join(s, " ")
	}
	for _, tt := range []struct {
		desc bool
		want string
	}{{false, "e b d a c"}, {true, "a b d e c"}} {
		got, err := shape(in, &plan.Node{Transforms: []plan.Transform{{Kind: plan.TSort, Field: "at", Desc: tt.desc}}}, d)
		if err != nil || ids(got) != tt.want {
			t.Errorf("sort desc=%v: %q, %v; want %q", tt.desc, ids(got), err, tt.want)
		}
	}
	agg, err := applyCompute(in, plan.Transform{Kind: plan.TAggregate, Aggs: []plan.Agg{
		{Name: "first", Fn: plan.AggMin, Field: "at"}, {Name: "last", Fn: plan.AggMax, Field: "at"}}}, d)
	if err != nil || agg.Rows[0][0] != "2025-03-19" || agg.Rows[0][1] != "2025-03-20T11:00:00Z" {
		t.Errorf("min/max: %v, %v", agg.Rows, err)
	}
	grp, err := applyCompute(in, plan.Transform{Kind: plan.TGroupBy, Field: "at", Aggs: []plan.Agg{{Name: "n", Fn: plan.AggCount}}}, d)
	if err != nil || len(grp.Rows) != 4 || grp.Rows[1][0] != "2025-03-20T12:00:00+02:00" || grp.Rows[1][1] != int64(2) {
		t.Errorf("group_by: %v, %v; want b and d in one group", grp.Rows, err)
	}
	dd, err := applyCompute(in, plan.Transform{Kind: plan.TDedupe, Fields: []string{"at"}}, d)
	if err != nil || ids(dd) != "a b c e" {
		t.Errorf("dedupe: %q, %v", ids(dd), err)
	}
	// A min over dates then sorted by it: the aggregate's column is a
	// date too (dateCols.after).
	grp2, err := shape(in, &plan.Node{Transforms: []plan.Transform{
		{Kind: plan.TGroupBy, Field: "id", Aggs: []plan.Agg{{Name: "first", Fn: plan.AggMin, Field: "at"}}},
		{Kind: plan.TSort, Field: "first"},
	}}, d)
	if err != nil || ids(grp2) != "e b d a c" {
		t.Errorf("sort after group_by min: %q, %v", ids(grp2), err)
	}
}

// TestDateEarlyStop: a read that stops once its .limit is filled counts
// rows by instant, so it neither stops early on rows text wrongly kept nor
// reads on past rows it wrongly dropped.
func TestDateEarlyStop(t *testing.T) {
	enough := untilLimit([]plan.Pred{{Field: "created_at", Op: ">", Value: "2025-03-20T12:00:00+02:00"}},
		[]plan.Transform{{Kind: plan.TLimit, N: 2}}, dateCols{"created_at": DateRFC3339})
	if n, err := enough(issues()); err != nil || n != 4 {
		t.Errorf("rows needed = %d, %v; want 4 (iss-3 and iss-4)", n, err)
	}
}

func TestNodeDates(t *testing.T) {
	lookup := func(entry, entity string) map[string]string {
		if entry == "e" && entity == "Issue" {
			return map[string]string{"created_at": DateRFC3339, "due": DateOnly}
		}
		return nil
	}
	nodes := []plan.Node{
		{ID: 0, Op: plan.OpFetch, EntryID: "e", Entity: "Issue", Input: -1},
		{ID: 1, Op: plan.OpTransform, EntryID: "e", Input: 0, Transforms: []plan.Transform{
			{Kind: plan.TGroupBy, Field: "due", Aggs: []plan.Agg{{Name: "first", Fn: plan.AggMin, Field: "created_at"}, {Name: "n", Fn: plan.AggCount}}}}},
		{ID: 2, Op: plan.OpTransform, EntryID: "e", Input: 1, Transforms: []plan.Transform{{Kind: plan.TSort, Field: "first"}}},
		{ID: 3, Op: plan.OpText, Input: -1},
		{ID: 4, Op: plan.OpTransform, Input: 4, Filters: []plan.Pred{{Field: "x", Op: "=", Value: "y"}}}, // malformed: its own input
		{ID: 5, Op: plan.OpFetch, EntryID: "e", Entity: "Issue", Input: -1},                              // compares nothing: not looked up
	}
	got := nodeDates(nodes, lookup)
	if got[0]["created_at"] != DateRFC3339 || got[1]["due"] != DateOnly {
		t.Errorf("entity nodes: %v", got)
	}
	if f, ok := got[2]["first"]; !ok || f != DateRFC3339 || len(got[2]) != 2 {
		t.Errorf("after group_by: %v; want due and first", got[2])
	}
	if got[3] != nil || got[4] != nil || got[5] != nil {
		t.Errorf("text and malformed nodes: %v %v", got[3], got[4])
	}
	if nodeDates(nodes, nil) != nil {
		t.Error("no lookup: want nil")
	}
}

// FuzzParseDate: any value in any format parses or is ErrNotDate, never
// panics, and what parses orders consistently with itself.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2017-11-04T18:48:46.250Z", "2017-11-04", "1509821326250", "-1.5", "1e3", "2017-11-04 18:48:46+02:00", "9999-12-31T23:59:59.999999999-23:59", ""} {
		for i := range 5 {
			f.Add(s, uint8(i))
		}
	}
	formats := []string{"", DateRFC3339, DateOnly, DateUnixMS, DateUnixSec}
	f.Fuzz(func(t *testing.T, s string, fi uint8) {
		format := formats[int(fi)%len(formats)]
		for _, v := range []any{s, json.Number(s)} {
			got, err := parseDate(v, format)
			if err != nil {
				if !errors.Is(err, ErrNotDate) {
					t.Fatalf("parseDate(%q, %q): %v is not ErrNotDate", s, format, err)
				}
				continue
			}
			if got.Year() < 0 || got.Year() > 10000 {
				t.Fatalf("parseDate(%q, %q) = %v: out of range", s, format, got)
			}
			k, err := keyOfDate(v, format)
			if err != nil || k != (dateKey{got.Unix(), got.Nanosecond()}) {
				t.Fatalf("keyOfDate(%q) = %v, %v", s, k, err)
			}
		}
	})
}

// BenchmarkDateFilter filters 10,000 RFC 3339 cells as instants (date)
// beside the text comparison the same rows got before (text, the
// baseline: what an untyped column still costs).
func BenchmarkDateFilter(b *testing.B) {
	in := abi.Table{Columns: []string{"id", "created"}}
	base := time.Date(2025, 3, 20, 0, 0, 0, 0, time.UTC)
	for i := range 10000 {
		in.Rows = append(in.Rows, []any{int64(i), base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)})
	}
	preds := []plan.Pred{{Field: "created", Op: ">", Value: "2025-03-22T12:00:00+02:00"}}
	for _, bc := range []struct {
		name string
		d    dateCols
	}{{"text", nil}, {"date", dateCols{"created": DateRFC3339}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := applyFilters(in, preds, bc.d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// An unset date cell (null, or the empty text some APIs send) is no date
// and no refusal: it passes no ordering, sorts last and groups with null
// (review finding: "" refused the whole run).
func TestUnsetDateCells(t *testing.T) {
	dates := dateCols{"due": DateRFC3339}
	rows := [][]any{{"a", "2024-05-01T00:00:00Z"}, {"b", ""}, {"c", nil}}
	tab := abi.Table{Columns: []string{"id", "due"}, Rows: slices.Clone(rows)}
	for _, op := range []string{">", "<"} {
		got, err := applyFilters(tab, []plan.Pred{{Field: "due", Op: op, Value: "2030-01-01"}}, dates)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{">": 0, "<": 1}[op]; len(got.Rows) != want {
			t.Errorf("due%s2030: kept %v, want %d row (an unset date passes no ordering)", op, got.Rows, want)
		}
	}
	sorted, err := sortDates(slices.Clone(rows), 1, "due", DateRFC3339, false)
	if err != nil {
		t.Fatal(err)
	}
	if sorted[0][0] != "a" {
		t.Errorf("sort put %v first, want the one date", sorted[0])
	}
	k1, err1 := dates.cellKey("group_by(due)", "due", 1, "")
	k2, err2 := dates.cellKey("group_by(due)", "due", 2, nil)
	if err1 != nil || err2 != nil || k1 != k2 {
		t.Errorf("unset keys %v %v (%v %v), want one null group", k1, k2, err1, err2)
	}
}

// A date-only cell is parsed once, not after four failed layouts.
func BenchmarkParseDateOnly(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseDateText("2024-05-01"); err != nil {
			b.Fatal(err)
		}
	}
}

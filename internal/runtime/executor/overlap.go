package executor

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
)

// ErrPagesOverlap means a list's next page was mostly rows the page before
// it had already returned: the backend does not page the way the catalog
// says, so the rows read are not the list.
var ErrPagesOverlap = errors.New("pages overlap")

// OverlapError names the list and how far into it the repeat was found. It
// matches ErrPagesOverlap.
type OverlapError struct {
	Capability string
	Entity     string
	Page       int // 1-based page of this read that repeated rows
	Repeated   int // compared rows of that page already on the page before
	Rows       int // identified rows of that page compared (at most maxSeen)
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("%v: page %d of %s (%s) holds %d of %d rows compared by id that the page before had already returned, "+
		"so the backend is not paging through the list and no answer is returned. A likely cause is the catalog's pagination: "+
		"a counter that is an item offset (offset, startAt, start) must step by the page size (step: N), "+
		"and the page parameter must be one the backend reads",
		ErrPagesOverlap, e.Page, e.Entity, e.Capability, e.Repeated, e.Rows)
}

// Is makes errors.Is(err, ErrPagesOverlap) hold.
func (e *OverlapError) Is(target error) bool { return target == ErrPagesOverlap }

// maxSeen bounds the row ids a continuation carries: of a page of more
// identified rows, its first and its last maxSeen (see pageSeen), and of a
// page a continuation resumes inside, its last maxSeen rows already
// returned.
const maxSeen = 1000

// Pages are compared by the entity's identity, never by whole rows: rows
// with no id (audit logs, events, reactions) may equal each other by
// content while being different items, so only an id says "the same row".
// A list whose rows carry no identity is not checked at all.
//
// Only the misconfiguration's signature is refused: more than half of a
// page's identified rows already on the page before. An item offset that
// steps by 1 while asking for n rows repeats n-1 of n; a page parameter the
// backend ignores repeats all of them. When the page before had more than
// maxSeen identified rows, only its first maxSeen are known, so the count
// is over the new page's first maxSeen identified rows: the same window of
// the list shifted by the step, so a step of 1 is refused at any page size.
//
// A live list read by offset shifts a few rows onto the next page when
// items are inserted between page reads (likely across page(handle) calls
// minutes apart): that is not the catalog's fault, so such a page is kept,
// and only its head is dropped when it is the page before's tail, in
// order (what a shift produces), so an entity is not answered twice. A
// repeat elsewhere in the page, or one not continuing the page before's
// tail, is kept as read: ids are not assumed unique within a list.

// pageSeen is the ids of a page's identified rows, in order: all of them,
// or when there are more than maxSeen, the first maxSeen (head) and the
// last maxSeen (tail).
type pageSeen struct {
	head, tail []string
}

// last is the page's tail: the rows a shift would repeat.
func (p pageSeen) last() []string {
	if p.tail != nil {
		return p.tail
	}
	return p.head
}

// identity is the columns of t that identify a row: the catalog's id field,
// or every key field of a compound key. nil when the mapping yields none
// of them (the rows then carry no identity and are not compared).
func identity(columns, fields []string) []int {
	if len(fields) == 0 {
		return nil
	}
	idx := make([]int, len(fields))
	for i, f := range fields {
		idx[i] = -1
		for j, c := range columns {
			if c == f {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil
		}
	}
	return idx
}

// idKey is a short hash of a row's identity (a continuation carries them);
// ok is false when the row has no id value, which says nothing about which
// entity it is.
func idKey(r []any, cols []int) (string, bool) {
	vals := make([]any, len(cols))
	empty := true
	for i, c := range cols {
		if c < len(r) {
			vals[i] = r[c]
		}
		if vals[i] != nil && vals[i] != "" {
			empty = false
		}
	}
	if empty {
		return "", false
	}
	h := fnv.New64a()
	// %v, not %#v: an id read as 7 on one page and 7.0 on another is one id.
	fmt.Fprintf(h, "%v", vals)
	return strconv.FormatUint(h.Sum64(), 36), true
}

// rowKeys keys every row of a page ("" for a row with no id value); nil
// when the list has no identity.
func rowKeys(rows [][]any, cols []int) []string {
	if cols == nil {
		return nil
	}
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i], _ = idKey(r, cols)
	}
	return keys
}

// idsOf is the non-empty keys, in order, keeping at most the last n.
func idsOf(keys []string, n int) []string {
	var out []string
	for _, k := range keys {
		if k != "" {
			out = append(out, k)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// seenOf is what the page after a page with these row keys compares with.
func seenOf(keys []string) pageSeen {
	all := idsOf(keys, len(keys))
	if len(all) <= maxSeen {
		return pageSeen{head: all}
	}
	return pageSeen{head: slices.Clone(all[:maxSeen]), tail: slices.Clone(all[len(all)-maxSeen:])}
}

// overlap compares a page as the backend returned it (its row keys) with
// the page before (prev). It returns how many of the compared identified
// rows repeat prev and how many were compared, whether that is the
// misconfiguration's signature (refuse), and how many of the page's rows
// to skip: at least skip (rows already returned), and all of its head that
// was already returned, counted from the page's first row: the page
// before's tail (a shift by an insert), then the rows of returned (its rows
// a continuation returned before resuming inside it, which an insert since
// may have moved).
func overlap(prev pageSeen, returned, keys []string, skip int) (repeated, compared int, refuse bool, next int) {
	if len(keys) == 0 || len(prev.head) == 0 && len(returned) == 0 {
		return 0, 0, false, skip
	}
	set := make(map[string]bool, len(prev.head))
	for _, k := range prev.head {
		set[k] = true
	}
	window := len(keys)
	if prev.tail != nil {
		window = len(prev.head) // the page before was cut to its first maxSeen
	}
	for _, k := range keys {
		if k == "" {
			continue
		}
		if compared == window {
			break
		}
		compared++
		if set[k] {
			repeated++
		}
	}
	if 2*repeated > compared {
		return repeated, compared, true, skip
	}
	run := shifted(prev.last(), keys)
	done := make(map[string]bool, len(returned))
	for _, k := range returned {
		done[k] = true
	}
	for run < len(keys) && keys[run] != "" && done[keys[run]] {
		run++
	}
	return repeated, compared, false, max(skip, run)
}

// shifted is the longest head of keys that is tail's end, in order.
func shifted(tail, keys []string) int {
	if len(keys) == 0 || keys[0] == "" {
		return 0
	}
	for j, k := range tail {
		n := len(tail) - j
		if k == keys[0] && n <= len(keys) && slices.Equal(tail[j:], keys[:n]) {
			return n
		}
	}
	return 0
}

package executor

import (
	"errors"
	"fmt"
	"hash/fnv"
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
	Repeated   int // identified rows of that page already on the page before
	Rows       int // identified rows on that page
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("%v: page %d of %s (%s) holds %d of its %d rows (by id) that the page before had already returned, "+
		"so the backend is not paging through the list and no answer is returned. A likely cause is the catalog's pagination: "+
		"a counter that is an item offset (offset, startAt, start) must step by the page size (step: N), "+
		"and the page parameter must be one the backend reads",
		ErrPagesOverlap, e.Page, e.Entity, e.Capability, e.Repeated, e.Rows)
}

// Is makes errors.Is(err, ErrPagesOverlap) hold.
func (e *OverlapError) Is(target error) bool { return target == ErrPagesOverlap }

// maxSeen bounds the row ids a continuation carries (a page of more rows
// is compared on its first maxSeen identified rows).
const maxSeen = 1000

// Pages are compared by the entity's identity, never by whole rows: rows
// with no id (audit logs, events, reactions) may equal each other by
// content while being different items, so only an id says "the same row".
// A list whose rows carry no identity is not checked at all.
//
// Only the misconfiguration's signature is refused: more than half of a
// page's identified rows already on the page before. An item offset that
// steps by 1 while asking for n rows repeats n-1 of n; a page parameter the
// backend ignores repeats all of them. A live list read by offset shifts a
// few rows onto the next page when items are inserted between page reads
// (likely across page(handle) calls minutes apart): that is not the
// catalog's fault, so such a page is kept, and only its leading rows whose
// id the page before already returned (what a shift produces) are dropped,
// so an entity is not counted twice. A repeat elsewhere in the page is kept
// as read.

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

// pageIDs keys the identified rows of a page (at most maxSeen).
func pageIDs(rows [][]any, cols []int) []string {
	if cols == nil {
		return nil
	}
	keys := make([]string, 0, min(len(rows), maxSeen))
	for _, r := range rows {
		if len(keys) == maxSeen {
			break
		}
		if k, ok := idKey(r, cols); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// overlap compares a page as the backend returned it with the ids of the
// page before (prev). It returns how many of the page's identified rows
// repeat prev and how many rows it identifies, whether that is the
// misconfiguration's signature (refuse), and lead: how many of the rows
// from skip on are repeats at their head (a shift by an insert), to drop.
func overlap(prev []string, rows [][]any, cols []int, skip int) (repeated, identified int, refuse bool, lead int) {
	if cols == nil || len(prev) == 0 {
		return 0, 0, false, 0
	}
	set := make(map[string]bool, len(prev))
	for _, k := range prev {
		set[k] = true
	}
	leading := true
	for i, r := range rows {
		k, ok := idKey(r, cols)
		if !ok {
			if i >= skip {
				leading = false
			}
			continue
		}
		identified++
		rep := set[k]
		if rep {
			repeated++
		}
		if i >= skip && leading {
			if rep {
				lead++
			} else {
				leading = false
			}
		}
	}
	return repeated, identified, 2*repeated > identified, lead
}

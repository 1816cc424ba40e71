package executor

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
)

// ErrPagesOverlap means a list's next page repeated rows of the page before
// it: the backend does not page the way the catalog says, so the rows read
// are not the list.
var ErrPagesOverlap = errors.New("pages overlap")

// OverlapError names the list and how far into it the repeat was found. It
// matches ErrPagesOverlap.
type OverlapError struct {
	Capability string
	Entity     string
	Page       int // 1-based page of this read that repeated rows
	Repeated   int // rows of that page already on the page before
	Rows       int // rows on that page
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("%v: page %d of %s (%s) repeats %d of its %d rows from the page before, so the list cannot be read whole; "+
		"no answer is returned. The catalog's pagination does not match the backend: a counter that is an item offset "+
		"(offset, startAt, start) must step by the page size (step: N), and the page parameter must be one the backend reads",
		ErrPagesOverlap, e.Page, e.Entity, e.Capability, e.Repeated, e.Rows)
}

// Is makes errors.Is(err, ErrPagesOverlap) hold.
func (e *OverlapError) Is(target error) bool { return target == ErrPagesOverlap }

// maxSeen bounds the row keys a continuation carries (a page of more rows
// is compared on its first maxSeen).
const maxSeen = 1000

// rowKeys keys a page's rows for comparing pages: a short hash of each row
// (a continuation carries them). A row with no value at all says nothing
// about which entity it is, so it is left out.
func rowKeys(rows [][]any) []string {
	keys := make([]string, 0, min(len(rows), maxSeen))
	for _, r := range rows {
		if len(keys) == maxSeen {
			break
		}
		if k, ok := rowKey(r); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func rowKey(r []any) (string, bool) {
	empty := true
	for _, v := range r {
		if v != nil && v != "" {
			empty = false
			break
		}
	}
	if empty {
		return "", false
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%#v", r)
	return strconv.FormatUint(h.Sum64(), 36), true
}

// repeated counts the rows of page whose keys are in prev.
func repeated(prev []string, page [][]any) int {
	if len(prev) == 0 {
		return 0
	}
	set := make(map[string]bool, len(prev))
	for _, k := range prev {
		set[k] = true
	}
	n := 0
	for _, r := range page {
		if k, ok := rowKey(r); ok && set[k] {
			n++
		}
	}
	return n
}

package executor

import (
	"errors"
	"fmt"
)

// ErrPageMax means a list's page counter reached its catalog max on a page
// that may not be the last: reading on is forbidden, and ending there
// would answer a prefix as the whole list.
var ErrPageMax = errors.New("page counter max reached")

// MaxPagesError names the list and the counter that stopped it. It matches
// ErrPageMax.
type MaxPagesError struct {
	Capability string
	Entity     string
	Counter    string // the counter and its max, as the page state says it ("page 2")
	Full       bool   // the page at max was as long as the page size asked for
	Pages      int    // pages of this read before stopping
	Rows       int    // rows of this read before stopping
}

func (e *MaxPagesError) Error() string {
	// An unsized counter's page at max was only not empty: nothing says
	// whether it was full, only that it may not be the last.
	last, before := "the last page read may not be the last page", "the page before may not be the last page"
	if e.Full {
		last, before = "the last page read was full", "the page before was full"
	}
	where := fmt.Sprintf("stopped at the catalog's page counter max (%s) after %d pages and %d rows, and %s", e.Counter, e.Pages, e.Rows, last)
	if e.Pages == 0 {
		// A handle whose next page is past max.
		where = fmt.Sprintf("cannot read on: its next page is past the catalog's page counter max (%s), and %s", e.Counter, before)
	}
	return fmt.Sprintf("%v: reading %s (%s) %s, so the list may go on; no partial list is returned. "+
		"Narrow the program (a predicate the backend filters on, %s{field=value}, or a .limit(n) without .sort that the pages up to max fill), "+
		"or raise or remove max in the catalog if the backend serves more pages",
		ErrPageMax, e.Entity, e.Capability, where, e.Entity)
}

// Is makes errors.Is(err, ErrPageMax) hold.
func (e *MaxPagesError) Is(target error) bool { return target == ErrPageMax }

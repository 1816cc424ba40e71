package catalogdir

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a catalog source file. Line and Column are 1-based;
// zero means the problem concerns the file (or directory) as a whole.
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

// Error formats the problem as "file:line:col: msg", leaving out the parts
// that are unknown so that editors can still jump to the file.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	default:
		return e.Msg
	}
}

// ErrorList is every problem found while loading one or more catalogs. The
// loader returns it sorted by file, line and column.
type ErrorList []*Error

// Error joins the problems one per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Sort orders the list by file, line, column and message.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.Msg < b.Msg
	})
}

// Err returns the list as an error, or nil when it is empty, so that callers
// never receive a non-nil error interface holding an empty list.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

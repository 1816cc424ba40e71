package lang

import (
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
)

func errAt(p pos, code, msg, hint string) *abi.Error {
	return &abi.Error{Code: code, Message: msg, Line: p.line, Column: p.col, Hint: hint}
}

// maxListed caps hint lists so a wide entity cannot flood the agent's context.
const maxListed = 40

// listHint renders "did you mean X? <what>: a, b, c".
func listHint(bad, what string, valid []string) string {
	var b strings.Builder
	if s := suggest(bad, valid); s != "" {
		fmt.Fprintf(&b, "did you mean %s? ", s)
	}
	if len(valid) == 0 {
		b.WriteString("there are no " + what)
		return b.String()
	}
	b.WriteString(what + ": ")
	if len(valid) > maxListed {
		b.WriteString(strings.Join(valid[:maxListed], ", "))
		fmt.Fprintf(&b, ", … (%d more)", len(valid)-maxListed)
	} else {
		b.WriteString(strings.Join(valid, ", "))
	}
	return b.String()
}

// suggest returns the closest candidate by case-insensitive edit distance,
// or "" when nothing is close enough to be a plausible typo.
func suggest(bad string, cands []string) string {
	if len(bad) > 64 {
		return ""
	}
	lb := strings.ToLower(bad)
	best, bestD := "", -1
	for _, c := range cands {
		lc := strings.ToLower(c)
		limit := max(1, min(len(lb), len(lc))/3)
		if len(lb) > 3 {
			limit = max(limit, 2)
		}
		if d := len(lb) - len(lc); d > limit || -d > limit {
			continue
		}
		d := editDistance(lb, lc)
		if lc == lb {
			d = 0
		}
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance over bytes; names are ASCII.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

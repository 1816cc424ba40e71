package server

import (
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/plasmd/plasmd/server/internal/problem"
)

// runQueryValues are the query parameters POST /execute/{ph}/{s} reads and
// the values each accepts (nil: any value).
var runQueryValues = map[string][]string{
	"mode":            {"plan"},
	"force":           {"true", "false"},
	"wait":            {"true", "false"},
	"plan_commit_ref": nil,
}

// checkRunQuery refuses a run whose query the server would misread. Each
// parameter used to be compared with one literal and anything else taken
// as absent, so ?mode=PLAN or ?mode=dry (meant as a dry run) ran the
// program live, and a misspelt ?mdoe=plan did too; ?force=1 and ?wait=no
// were silently ignored. A dry run the caller did not get is the costly
// misreading, so every parameter and value must be one the server knows.
//
// raw is the request's raw query: url.Values drops pairs it cannot parse
// (?mode=plan;x=1, ?mode=plan%ZZ), which would leave mode unset and run
// live, so a query that does not parse whole is refused.
func checkRunQuery(raw string) error {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return problem.BadRequest("bad-query", "the query string does not parse (%v); separate parameters with & and escape %% as %%25", err)
	}
	for name, vals := range q {
		allowed, known := runQueryValues[name]
		if !known {
			return problem.BadRequest("bad-query", "unknown query parameter %q on a run; known: %s", name, knownRunParams())
		}
		if len(vals) > 1 {
			return problem.BadRequest("bad-query", "query parameter %q is given %d times; give it once", name, len(vals))
		}
		if allowed != nil && !slices.Contains(allowed, vals[0]) {
			return problem.BadRequest("bad-query", "query parameter %s=%q is not understood; use %s=%s", name, vals[0], name, strings.Join(allowed, " or "+name+"="))
		}
	}
	return nil
}

func knownRunParams() string {
	names := make([]string, 0, len(runQueryValues))
	for n := range runQueryValues {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

package lang

import "github.com/plasmd/plasmd/guest/abi"

// The grammar is shared with the wider Plasm language. Constructs this
// server does not execute are parsed (so the agent gets a precise answer, not
// a syntax error) and then refused here, before any planning, at the
// position of the construct.

var unsupportedHints = map[stepKind]string{
	stPageSize:  "use .limit(n) to bound the rows returned",
	stAggregate: "return the rows (projected) and aggregate them yourself",
	stGroupBy:   "return the rows (projected) and group them yourself",
	stDedupe:    "project the fields you need and dedupe the result yourself",
	stSingleton: "use .limit(1)",
}

func notSupported(p pos, what, hint string) *abi.Error {
	return errAt(p, abi.CodeBadRequest, what+" is not supported by this server yet", hint)
}

func unsupportedStep(st *step) *abi.Error {
	return notSupported(st.p, "."+stepNames[st.kind]+"(…)", unsupportedHints[st.kind])
}

func checkSupported(lines []*line) *abi.Error {
	for _, ln := range lines {
		for _, r := range ln.rhs {
			switch r.kind {
			case rhsDerive:
				return notSupported(r.arrow, "derive ("+r.over.raw+" => {…})", "project the fields you need with "+r.over.raw+"[field, …]")
			case rhsEffect:
				return notSupported(r.arrow, "effect ("+r.over.raw+" => …)", "call the method on the bound rows to run it once per row: "+r.over.raw+".method(…)")
			case rhsWait:
				return notSupported(r.p, "wait(…)", "this server runs programs to completion; there is no operation to wait for")
			case rhsCancel:
				return notSupported(r.p, "cancel(…)", "this server runs programs to completion; there is no operation to cancel")
			}
			for _, st := range r.steps {
				if _, ok := unsupportedHints[st.kind]; ok {
					return unsupportedStep(st)
				}
			}
			if r.render != nil {
				return notSupported(*r.render, "render (<<TAG)", "return the rows and format them yourself")
			}
		}
	}
	return nil
}

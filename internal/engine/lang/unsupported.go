package lang

import "github.com/plasmd/plasmd/guest/abi"

// The grammar is shared with the wider Plasm language. Constructs this
// server does not execute are parsed (so the agent gets a precise answer, not
// a syntax error) and then refused here, before any planning, at the
// position of the construct.

var unsupportedHints = map[stepKind]string{}

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
			case rhsWait:
				return notSupported(r.p, "wait(…)", "this server runs programs to completion; there is no operation to wait for")
			case rhsCancel:
				return notSupported(r.p, "cancel(…)", "this server runs programs to completion; there is no operation to cancel")
			}
			chains := [][]*step{r.steps}
			if r.effect != nil {
				chains = append(chains, r.effect.steps)
			}
			if len(unsupportedHints) == 0 {
				continue // every step kind is supported; no lookup per step
			}
			for _, steps := range chains {
				for _, st := range steps {
					if _, ok := unsupportedHints[st.kind]; ok {
						return unsupportedStep(st)
					}
				}
			}
		}
	}
	return nil
}

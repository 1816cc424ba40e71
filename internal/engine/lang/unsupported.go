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
			case rhsWait, rhsCancel:
				return notAlone(r)
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

// notAlone refuses a wait(…) or cancel(…) the host did not take. The host
// answers them (operations live there, not in the plan) only when one is
// the whole live program; what reaches the planner is one beside other
// statements, or one sent for a dry run. The message used to say this
// server has no operations at all, which sent agents away from a handle
// that works.
func notAlone(r *rhs) *abi.Error {
	verb := "wait"
	if r.kind == rhsCancel {
		verb = "cancel"
	}
	return errAt(r.p, abi.CodeBadRequest, verb+"(…) must be the whole program, and is not planned",
		"send "+verb+"(sN_oM) on its own (;; comments aside) as a live run: plasm_run, or HTTP without ?mode=plan")
}

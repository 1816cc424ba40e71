package core

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Session handles: besides the per-connection ref (s0, s1, …), every
// result names the logical session by a canonical handle that plasm,
// plasm_run and page accept from any connection of the same tenant. A
// client that connects per call (the Inspector CLI, scripts, serverless
// hosts) has no connection to keep refs on; the handle is all it needs.
//
// The handle is the logical session id in a fixed textual form. It carries
// no tenant and grants nothing by itself: it is resolved only within the
// caller's tenant (the store answers "not found" for another tenant's id,
// the same as for garbage), and it lives in the session store, so any
// replica sharing the store resolves it.

// HandlePrefix marks a canonical session handle; refs are sN, never this.
const HandlePrefix = "plasm_ls_"

// SessionHandle returns the canonical handle of a logical session.
func SessionHandle(logicalID string) string {
	return HandlePrefix + strings.ReplaceAll(logicalID, "-", "")
}

// ParseSessionHandle returns the logical id a handle names; ok is false
// when s is not shaped like a handle (it may still be an sN ref).
func ParseSessionHandle(s string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), HandlePrefix)
	if !ok || len(rest) != 32 {
		return "", false
	}
	id, err := uuid.Parse(rest)
	if err != nil {
		return "", false
	}
	return id.String(), true
}

// IsSessionHandle reports whether s is shaped like a canonical handle.
func IsSessionHandle(s string) bool {
	_, ok := ParseSessionHandle(s)
	return ok
}

// refForm is what a per-connection ref looks like.
var refForm = regexp.MustCompile(`^s[0-9]+$`)

// IsRef reports whether s is shaped like a per-connection ref (s0, s1, …).
func IsRef(s string) bool { return refForm.MatchString(s) }

// TeachingURI is the resource holding a logical session's cumulative
// teaching text.
func TeachingURI(ref string) string { return "plasm://session/" + ref + "/teaching" }

// refreshHint is appended to the unchanged line: how an agent that lost the
// table (a restarted agent may reuse its intent) gets it back, without the
// server replaying it unasked (seed 000).
func refreshHint(ref string) string {
	return " Lost the table? Call `plasm_context` with `refresh: true`, or read `" + TeachingURI(ref) + "`."
}

// unchangedAnswer is the whole plasm_context answer when nothing is new:
// the ref line, then the unchanged line with the refresh hint.
func unchangedAnswer(ref, line string) string {
	body := strings.TrimSuffix(line, "_")
	return "`" + ref + "`\n\n" + body + refreshHint(ref) + "_"
}

// foreignPageRef reports whether a paging or operation handle minted under
// ref on an earlier connection may be used in this run: a client that
// connects per call names its session by handle and gets a new sN on each
// connection. Pages and operations are stored per logical session, so the
// lookup that follows cannot reach another session's; the prefix is still
// refused when it names a different logical session on this very
// connection (a real mix-up), and always when the session was named by sN.
func (s *Service) foreignPageRef(ctx context.Context, t *tenant.Tenant, sc RunScope, ref string) bool {
	if !sc.ByHandle || sc.Transport == "" || sc.LogicalID == "" || !refForm.MatchString(ref) {
		return false
	}
	id, err := s.store.ResolveRef(ctx, sc.Transport, t.ID, ref)
	return err != nil && errors.Is(err, session.ErrNotFound) || err == nil && id == sc.LogicalID
}

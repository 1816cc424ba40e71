package server

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Canonical refs. A logical session's id (a UUID the store minted for the
// tenant) is accepted wherever a logical_session_ref is, as its
// session_handle is (core/handles.go): it needs no transport, so it works
// from any connection and on any replica sharing the store, and it is
// tenant-bound (another tenant's id reads as not found).
//
// Results name the session by its sN ref in every mode, the same from
// plasm_context as from plasm / plasm_run (surfaces.md: the first line is
// `sN`, and the canonical handle comes "besides sN"). A stateless request
// has no transport session, so its refs are numbered in the tenant's
// stateless scope (mcpSessions.id), which every replica on the same store
// shares: the sN resolves on any of them.

// resolveRef maps a logical_session_ref (sN on this transport, or a
// canonical id) to the tenant's logical session id.
func (a *App) resolveRef(ctx context.Context, transport string, t *tenant.Tenant, ref string) (string, error) {
	if _, err := uuid.Parse(ref); err != nil || strings.Contains(ref, "_") {
		return a.svc.Store().ResolveRef(ctx, transport, t.ID, ref)
	}
	l, err := a.svc.Store().GetLogical(ctx, t.ID, ref)
	if err != nil {
		return "", err
	}
	return l.ID, nil
}

// runRef is the ref a run's paging handles and short URIs are minted
// under. For a canonical ref it is the logical session's sN on this
// transport (for stateless requests, the tenant-wide scope every replica
// shares), because paging handles have the form sN_pgM.
func (a *App) runRef(ctx context.Context, transport string, t *tenant.Tenant, ref, logicalID string) string {
	if ref != logicalID {
		return ref
	}
	short, err := a.svc.Store().RefFor(ctx, transport, t.ID, logicalID)
	if err != nil {
		return ref
	}
	return short
}

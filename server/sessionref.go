package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// resolveSession turns what the agent passed as logical_session_ref (an
// sN ref of this connection, or a canonical session handle from any
// connection, see core/handles.go) into the logical session id and the sN
// ref that names it on this connection; a handle used on a new connection
// mints that ref.
func (a *App) resolveSession(ctx context.Context, t *tenant.Tenant, transport, ref string) (lid, sref string, err error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", "", problem.BadRequest("missing-ref", "logical_session_ref is required (call plasm_context first)")
	}
	store := a.svc.Store()
	if id, ok := core.ParseSessionHandle(ref); ok {
		if _, err := store.GetLogical(ctx, t.ID, id); err != nil {
			if !storeUnavailable(err) && errors.Is(err, session.ErrNotFound) {
				p := problem.NotFound("session handle %s is unknown", ref)
				p.Hint = "call plasm_context with your intent and seeds; it returns the session_handle to use"
				return "", "", p
			}
			return "", "", err
		}
		sref, err := store.RefFor(ctx, transport, t.ID, id)
		if err != nil {
			return "", "", err
		}
		return id, sref, nil
	}
	// An sN of this connection, or (stateless MCP) the logical id itself.
	id, err := a.resolveRef(ctx, transport, t, ref)
	if storeUnavailable(err) {
		return "", "", err
	}
	if err != nil {
		p := problem.NotFound("logical_session_ref %q is unknown on this connection", ref)
		p.Hint = "pass the session_handle from an earlier result (it works from any connection), or call plasm_context with your intent and seeds"
		if strings.HasPrefix(ref, core.HandlePrefix) {
			p.Detail = fmt.Sprintf("%q is not a well-formed session handle", ref)
		}
		return "", "", p
	}
	return id, a.runRef(ctx, transport, t, ref, id), nil
}

// readTeachingResource serves plasm://session/{ref}/teaching: the bound
// execute session's cumulative teaching text (first wave and every delta).
// {ref} is an sN of this connection or a canonical handle. Another
// tenant's session is "not found".
func (a *App) readTeachingResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	t, err := a.mcpTenantFromHeader(req.Extra)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	ref, ok := strings.CutSuffix(strings.TrimPrefix(uri, "plasm://session/"), "/teaching")
	if !ok || !strings.HasPrefix(uri, "plasm://session/") || strings.Contains(ref, "/") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	ex, _, _, err := a.sessionFor(ctx, t, a.mcpIDs.id(req.Session, req.Extra, t), ref)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: ex.Prompt}}}, nil
}

// sessionMetaFields are the session-naming fields every MCP result carries
// in _meta.plasm and structuredContent.
func sessionMetaFields(meta map[string]any, ref, logicalID string) {
	meta["logical_session_ref"] = ref
	meta["logical_session_id"] = logicalID
	meta["session_handle"] = core.SessionHandle(logicalID)
	meta["teaching_uri"] = core.TeachingURI(ref)
}

// staleSession is the error for a logical session whose execute session is
// gone: its symbols are void and plasm_context must be called again.
func staleSession(ref string) error {
	p := problem.New(http.StatusGone, "stale-session", fmt.Sprintf("the execute session behind %s expired or is gone; its symbols are void", ref))
	p.Hint = "call plasm_context again with the same intent to open a new session, then use only the new table's symbols"
	return p
}

package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Invalidation notifications (seed 004): the App owns one bus; each MCP
// session forwards its tenant's events as notifications/message.

// notifySendTimeout bounds one notification write, so a client that stops
// reading stalls only its own forwarder (whose bounded buffer then drops).
const notifySendTimeout = 10 * time.Second

// Bus returns the invalidation bus (relays and tests publish on it).
func (a *App) Bus() *bus.Bus { return a.bus }

// notifyMiddleware wires a session for invalidation notifications: on
// initialize it makes info the session's default log level (the SDK sends
// no log message until a client sets a level; a client that sets warning
// still silences them), and once the session is initialised it subscribes
// it to its tenant's bus (the tenant comes from the request's bearer token;
// the initialized callback carries no HTTP headers).
func (a *App) notifyMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if !ok {
			return res, err
		}
		switch method {
		case "initialize":
			setReq := &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{Session: ss, Params: &mcp.SetLoggingLevelParams{Level: bus.Level}}
			if _, serr := next(ctx, "logging/setLevel", setReq); serr != nil {
				return nil, serr
			}
		case "notifications/initialized":
			if a.cfg.MCPStateless {
				break // a stateless session lives for one request
			}
			if t, terr := a.mcpTenantFromHeader(req.GetExtra()); terr == nil {
				a.forwardSession(ss, t)
			}
		}
		return res, err
	}
}

// forwardSession subscribes a session to its tenant's events and starts
// its forwarder; both end when the session closes (or, should it be
// dropped without closing, when the forwarder finds it collected).
func (a *App) forwardSession(ss *mcp.ServerSession, t *tenant.Tenant) {
	sub := a.bus.Subscribe(t.ID)
	log, handled := a.log, &a.notifyHandled
	send := func(ctx context.Context, ss *mcp.ServerSession, m bus.Message) bool {
		ctx, cancel := context.WithTimeout(ctx, notifySendTimeout)
		defer cancel()
		err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(m.Level), Logger: m.Logger, Data: m.Data})
		handled.Add(1)
		if errors.Is(err, mcp.ErrConnectionClosed) {
			return true
		}
		if err != nil {
			log.Debug("invalidation notification not delivered", "err", err)
		}
		return false
	}
	window := a.cfg.NotifyWindow
	switch {
	case window == 0:
		window = bus.DefaultWindow
	case window < 0:
		window = 0
	}
	go bus.Forward(context.Background(), sub, ss, send, bus.ForwardOptions{Window: window})
	tenantID := t.ID
	go func() {
		_ = ss.Wait()
		sub.Close()
		// Other sessions of the tenant learn that this one closed.
		a.bus.Publish(bus.Event{Kind: bus.KindSession, Reason: "closed", Tenant: tenantID, SessionID: ss.ID()})
	}()
}

// sessionExpired announces an execute session that passed its idle TTL.
func (a *App) sessionExpired(e session.Execute) {
	a.bus.Publish(bus.Event{Kind: bus.KindSession, Reason: "expired", Tenant: e.Tenant, PromptHash: e.PromptHash, SessionID: e.ID})
}

// invalidateIn is the body of POST /v1/invalidate: a backend announcing a
// change plasmd did not make.
type invalidateIn struct {
	Kind    string   `json:"kind"`
	Reason  string   `json:"reason"`
	EntryID string   `json:"entry_id"`
	Entity  string   `json:"entity"`
	IDs     []string `json:"ids"`
}

// Bounds of a webhook body, so a caller cannot fan a huge message out to
// every session of its tenant.
const (
	maxInvalidateIDs    = 256
	maxInvalidateReason = 200
)

// invalidate handles POST /v1/invalidate for the caller's tenant only.
func (a *App) invalidate(c echo.Context) error {
	t := tenantOf(c)
	var in invalidateIn
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	kind := bus.Kind(strings.TrimSpace(in.Kind))
	switch kind {
	case bus.KindRows, bus.KindCatalog, bus.KindTenant:
	case "":
		return problem.BadRequest("bad-invalidation", "kind is required: rows, catalog or tenant")
	default:
		return problem.BadRequest("bad-invalidation", "kind %q is not one of rows, catalog, tenant", in.Kind)
	}
	reason := strings.TrimSpace(in.Reason)
	if reason == "" {
		reason = "webhook"
	}
	if len(reason) > maxInvalidateReason || len(in.IDs) > maxInvalidateIDs {
		return problem.BadRequest("bad-invalidation", "reason is limited to %d bytes and ids to %d", maxInvalidateReason, maxInvalidateIDs)
	}
	ev := bus.Event{Kind: kind, Reason: reason, Tenant: t.ID, IDs: in.IDs}
	if kind != bus.KindTenant {
		if in.EntryID == "" {
			return problem.BadRequest("bad-invalidation", "entry_id is required for kind %s", kind)
		}
		cat, _, err := a.svc.Catalog(t, in.EntryID)
		if err != nil {
			return err
		}
		ev.EntryID = cat.EntryID
		if kind == bus.KindCatalog {
			ev.Digest = cat.Digest
		}
		if in.Entity != "" {
			if !slices.Contains(cat.Entities, in.Entity) {
				return problem.NotFound("catalog %q has no entity %q", cat.EntryID, in.Entity)
			}
			ev.Entity = in.Entity
		}
	}
	a.bus.Publish(ev)
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": true, "event": bus.Data(kind)})
}

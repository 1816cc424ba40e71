package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/console"
)

func (a *App) newConsole() error {
	c, err := console.New(consoleBackend{a}, a.svc.Journal())
	if err != nil {
		return err
	}
	a.console = c
	return nil
}

// consoleRoutes mounts the web console at /ui with the API's auth rules.
func (a *App) consoleRoutes(e *echo.Echo) {
	e.GET("/ui", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/ui/") })
	h := func(c echo.Context) error {
		r := c.Request()
		if v, ok := a.consoleViewer(r); ok {
			r = r.WithContext(console.WithViewer(r.Context(), v))
		}
		a.console.ServeHTTP(c.Response(), r)
		return nil
	}
	e.Any("/ui/", h)
	e.Any("/ui/*", h)
}

// consoleViewer applies the API's auth to the console. With auth off the
// server is loopback-only (loopbackOnly) and the viewer is the operator.
// With auth on, a bearer token (header or the console's login cookie) makes
// a tenant viewer who sees only that tenant; a loopback operator without a
// token gets the all-tenant view, as /metrics does. Anyone else has no
// viewer and is sent to the login page.
func (a *App) consoleViewer(r *http.Request) (console.Viewer, bool) {
	if a.tenants == nil {
		return console.Viewer{Operator: true}, true
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if tok == "" {
		if ck, err := r.Cookie(console.CookieName); err == nil {
			tok = ck.Value
		}
	}
	if tok = strings.TrimSpace(tok); tok != "" {
		t, err := a.tenants.Authenticate(tok)
		if err != nil {
			return console.Viewer{}, false
		}
		return console.Viewer{Tenant: t.ID, Operator: a.operator(r)}, true
	}
	if a.operator(r) {
		return console.Viewer{Operator: true}, true
	}
	return console.Viewer{}, false
}

// RelayActivity streams an event source (such as the cross-replica
// invalidation bus) into the console's live activity until ctx ends.
// Events with a tenant reach that tenant's viewers and operators; events
// without one reach operators only.
func (a *App) RelayActivity(ctx context.Context, src activity.Source) {
	a.svc.Journal().Relay(ctx, src)
}

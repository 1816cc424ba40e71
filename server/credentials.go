package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

func (a *App) credentialRoutes(route func(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)) {
	route(http.MethodGet, "/v1/credentials", a.credentialsList)
	route(http.MethodPut, "/v1/credentials/:entry", a.credentialPut)
	route(http.MethodDelete, "/v1/credentials/:entry", a.credentialDelete)
}

// credentialPut stores the caller's own credential for a catalog the
// tenant delegates: {"token": "…"} or {"secrets": {NAME: value}}.
func (a *App) credentialPut(c echo.Context) error {
	var req struct {
		Token   string            `json:"token"`
		Secrets map[string]string `json:"secrets"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if _, err := a.svc.PutCredential(c.Request().Context(), tenantOf(c), c.Param("entry"), req.Token, req.Secrets); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *App) credentialDelete(c echo.Context) error {
	if err := a.svc.DeleteCredential(c.Request().Context(), tenantOf(c), c.Param("entry")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// credentialsList names the catalogs that take the caller's credential and
// those it has connected; never a value.
func (a *App) credentialsList(c echo.Context) error {
	t := tenantOf(c)
	wanted, connected, err := a.svc.Credentials(c.Request().Context(), t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"principal": t.Principal, "catalogs": wanted, "connected": connected})
}

package server

import (
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/plasmd/plasmd/server/internal/audit"
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/credstore"
	"github.com/plasmd/plasmd/server/internal/problem"
)

// auditList serves GET /v1/audit: the caller's tenant's records only (a
// person's own, or with a tenant token the whole tenant's).
func (a *App) auditList(c echo.Context) error {
	t := tenantOf(c)
	limit := 100
	if q := c.QueryParam("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > core.AuditRingSize {
			return problem.BadRequest("bad-limit", "limit must be 1..%d", core.AuditRingSize)
		}
		limit = n
	}
	recs, err := a.svc.AuditRecords(c.Request().Context(), t, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tenant": t.ID, "records": recs})
}

// openStores opens the credential and audit files a Config names (when no
// store is injected) and returns what closes them.
func openStores(cfg *Config) (func(), error) {
	closers := []func(){}
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	if cfg.Credentials == nil && cfg.CredentialsFile != "" {
		key, err := credstore.ParseKey(os.Getenv(credstore.KeyEnv))
		if err != nil {
			return nil, fmt.Errorf("--credentials %s: %w", cfg.CredentialsFile, err)
		}
		st, err := credstore.OpenFile(cfg.CredentialsFile, key)
		if err != nil {
			return nil, err
		}
		cfg.Credentials = st
	}
	if cfg.Audit == nil && cfg.AuditFile != "" {
		l, err := audit.OpenFile(cfg.AuditFile, core.AuditRingSize)
		if err != nil {
			closeAll()
			return nil, err
		}
		cfg.Audit = l
		closers = append(closers, func() { _ = l.Close() })
	}
	return closeAll, nil
}

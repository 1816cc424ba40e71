package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/sdk/trace"

	"github.com/plasmd/plasmd/internal/text"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/tenant"
	"github.com/plasmd/plasmd/server/internal/tracing"
)

// OTLPTracerProvider exports spans over OTLP/HTTP to endpoint (for
// `--otlp-endpoint`); Shutdown flushes it.
func OTLPTracerProvider(ctx context.Context, endpoint string) (*trace.TracerProvider, error) {
	return tracing.OTLP(ctx, endpoint)
}

// maxLoggedPath bounds the path a request line quotes. Go's server takes
// request lines up to its 1 MB header limit, and the line is written for
// every request, authenticated or not: unclipped, each one could write a
// megabyte to the log.
const maxLoggedPath = 512

// requestLog writes one line per request with the tenant, logical and
// execute session, run id and problem type (empty when they do not
// apply). It logs the path without its query and never a header, so
// bearer tokens, cookies and upstream secrets stay out of the log.
func (a *App) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		r := c.Request()
		ctx, note := activity.WithNote(r.Context())
		c.SetRequest(r.WithContext(ctx))
		err := next(c)
		status := c.Response().Status
		ptype := ""
		if err != nil {
			p := a.problemFor(err)
			status, ptype = p.Status, p.Type
		}
		tenantID := ""
		if t, ok := c.Get(tenantKey).(*tenant.Tenant); ok {
			tenantID = t.ID
		}
		logical, execute, runID := note.Values()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		a.log.LogAttrs(r.Context(), level, "request",
			slog.String("method", text.Clip(r.Method, 16)), slog.String("path", text.Clip(r.URL.Path, maxLoggedPath)), slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
			slog.String("tenant", tenantID), slog.String("logical_session", logical),
			slog.String("execute_session", execute), slog.String("run_id", runID),
			slog.String("problem_type", ptype))
		return err
	}
}

// problemFor is the problem httpError will answer for err.
func (a *App) problemFor(err error) *problem.Problem {
	var p *problem.Problem
	var he *echo.HTTPError
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return problem.New(he.Code, "not-found", "")
		case http.StatusMethodNotAllowed:
			return problem.New(he.Code, "method-not-allowed", "")
		case http.StatusRequestEntityTooLarge:
			return problem.New(he.Code, "body-too-large", "")
		}
		return problem.New(he.Code, "http", "")
	}
	return problem.From(err)
}

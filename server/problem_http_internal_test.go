package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/problem"
)

// A 429 carries Retry-After, so HTTP clients back off without parsing JSON.
func TestBusyRetryAfterHeader(t *testing.T) {
	a := &App{cfg: Config{MaxBody: "1M"}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e := echo.New()
	rec := httptest.NewRecorder()
	c := e.NewContext(httptest.NewRequest(http.MethodPost, "/execute/x/y", nil), rec)
	a.httpError(&sandbox.CallError{Err: sandbox.ErrBusy, RetryAfter: 1200 * time.Millisecond}, c)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	var p problem.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.RetryAfter != 2 {
		t.Fatalf("body %s: %v", rec.Body.String(), err)
	}
}

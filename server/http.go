package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/text"
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/results"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

const tenantKey = "plasmd.tenant"

// routes registers the HTTP surface on e.
func (a *App) routes(e *echo.Echo) {
	e.HTTPErrorHandler = a.httpError
	e.Use(a.requestLog)
	e.Use(a.recoverer)
	if a.tenants == nil {
		e.Use(a.loopbackOnly)
	}
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: a.cfg.MaxBody}))
	e.GET("/v1/health", a.health)
	a.metadataRoutes(e)
	// Authenticated routes carry the middleware themselves rather than
	// through a Group: echo gives a group with middleware a catch-all
	// route, which answered a wrong method on a real path (PUT /execute)
	// with 404 "no such route" instead of 405 with Allow.
	auth := func(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
		e.Add(method, path, h, append([]echo.MiddlewareFunc{a.authenticate}, m...)...)
	}
	auth(http.MethodGet, "/v1/registry", a.registryList)
	auth(http.MethodGet, "/v1/registry/:entry", a.registryEntry)
	auth(http.MethodPost, "/v1/discover", a.discover)
	a.credentialRoutes(auth)
	auth(http.MethodGet, "/v1/audit", a.auditList)
	auth(http.MethodPost, "/v1/invalidate", a.invalidate)
	auth(http.MethodPost, "/execute", a.executeOpen)
	auth(http.MethodGet, "/execute/:ph/:s", a.executeGet)
	auth(http.MethodPost, "/execute/:ph/:s", a.executeRun)
	auth(http.MethodPost, "/execute/:ph/:s/context", a.executeContext)
	auth(http.MethodGet, "/execute/:ph/:s/runs", a.executeRuns)
	auth(http.MethodGet, "/execute/:ph/:s/artifacts/:run", a.executeArtifact)
	auth(http.MethodGet, "/execute/:ph/:s/operations/:handle", a.executeOperation)
	// Metrics carry tenant ids (bounded, from the tenants file) but no
	// secrets; with auth on only loopback clients (operators) may read them.
	e.GET("/metrics", echo.WrapHandler(a.metrics.Handler()), a.operatorOnly)
	mcpHandler := echo.WrapHandler(a.mcpHTTP)
	e.Any("/mcp", mcpHandler, a.authenticate, a.mcpGuard)
	a.consoleRoutes(e)
}

// loopbackOnly guards an auth-off server against DNS rebinding: it listens
// on loopback only, so a request naming another Host (or coming from a page
// of another Origin) is a browser tricked into talking to it, and must not
// reach the anonymous tenant's secrets.
func (a *App) loopbackOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !loopbackHost(r.Host) {
			return problem.New(http.StatusForbidden, "host-not-allowed", "auth is off, so only loopback Host headers are served")
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || !loopbackHost(u.Host) {
				return problem.New(http.StatusForbidden, "origin-not-allowed", "auth is off, so only loopback origins are served")
			}
		}
		return next(c)
	}
}

// loopbackHost reports whether a Host header (host or host:port) names
// this machine's loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// recoverer turns a panic in a handler into a generic 500 problem; the
// stack goes to the log, never to the client.
func (a *App) recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				a.log.Error("handler panic", "path", c.Path(), "panic", r)
				err = problem.New(http.StatusInternalServerError, "internal", "internal error")
			}
		}()
		return next(c)
	}
}

// httpError writes every error as application/problem+json.
func (a *App) httpError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var p *problem.Problem
	var he *echo.HTTPError
	switch {
	case errors.As(err, &p):
	case errors.As(err, &he):
		p = problem.New(he.Code, "http", http.StatusText(he.Code))
		if he.Code == http.StatusRequestEntityTooLarge {
			p = problem.New(he.Code, "body-too-large", "the request body is over the "+a.cfg.MaxBody+" limit")
		}
		if he.Code == http.StatusNotFound {
			p = problem.New(he.Code, "not-found", "no such route: "+text.Clip(c.Request().Method, 16)+" "+text.Clip(c.Request().URL.Path, maxLoggedPath))
		}
		if he.Code == http.StatusMethodNotAllowed {
			p = problem.New(he.Code, "method-not-allowed", text.Clip(c.Request().Method, 16)+" is not allowed on "+text.Clip(c.Request().URL.Path, maxLoggedPath))
		}
	default:
		p = problem.From(err)
	}
	if p.Status >= 500 && p.Type == problem.Base+"internal" {
		a.log.Error("internal error", "path", text.Clip(c.Request().URL.Path, maxLoggedPath), "err", err)
	}
	if p.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
	c.Response().WriteHeader(p.Status)
	_ = json.NewEncoder(c.Response()).Encode(p)
}

// authenticate resolves the tenant from the bearer token (or the anonymous
// tenant when auth is off) and stores it on the request.
func (a *App) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, err := a.tenantFor(c.Request())
		if err != nil {
			return a.unauthorized(c, err)
		}
		c.Set(tenantKey, t)
		withCaller(c, t)
		// MCP is charged per tool call (rateLimitTools), not per message.
		if c.Path() != "/mcp" {
			if err := a.svc.AdmitRequest(c.Request().Context(), t); err != nil {
				return err
			}
		}
		return next(c)
	}
}

func (a *App) tenantFor(r *http.Request) (*tenant.Tenant, error) { return a.identify(r) }

func tenantOf(c echo.Context) *tenant.Tenant { return c.Get(tenantKey).(*tenant.Tenant) }

// operator reports whether a request may see process-wide details
// (catalog ids, refused modules, per-tenant metrics). With auth off the
// server is loopback-only anyway; with auth on, only loopback clients are
// operators, so no tenant can enumerate other tenants or their catalogs.
func (a *App) operator(r *http.Request) bool {
	if a.tenants == nil {
		return true
	}
	// Behind a reverse proxy on the same host every request arrives from
	// loopback; a forwarded request is a tenant's, not an operator's.
	if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" || r.Header.Get("X-Real-Ip") != "" {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// operatorOnly guards routes that expose every tenant's data.
func (a *App) operatorOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !a.operator(c.Request()) {
			return problem.New(http.StatusForbidden, "operator-only", "this route is served to loopback clients only when auth is on")
		}
		return next(c)
	}
}

func (a *App) health(c echo.Context) error {
	if err := a.storeReady(c); err != nil {
		return err
	}
	if !a.operator(c.Request()) {
		return c.JSON(http.StatusOK, map[string]any{"status": "ok"})
	}
	h := a.svc.Health()
	return c.JSON(http.StatusOK, map[string]any{
		"status":   "ok",
		"catalogs": h.Catalogs,
		"engine":   h.Engine,
		"store":    h.Store,
		"refused":  h.Refused,
	})
}

func (a *App) registryList(c echo.Context) error {
	t := tenantOf(c)
	return c.JSON(http.StatusOK, map[string]any{"tenant": t.ID, "catalogs": a.svc.Catalogs(t), "limits": a.svc.EffectiveLimits(t), "run_budget": t.Limits.RunBudget(),
		"rate_limits": t.RateLimits, "principal": t.Principal})
}

func (a *App) registryEntry(c echo.Context) error {
	t := tenantOf(c)
	cat, caps, err := a.svc.Catalog(t, c.Param("entry"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"catalog": cat, "capabilities": caps})
}

func (a *App) discover(c echo.Context) error {
	var req struct {
		Intent     string   `json:"intent"`
		MaxOptions int      `json:"max_options"`
		Allowed    []string `json:"allowed_entry_ids"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	text, opts, err := a.svc.Discover(tenantOf(c), req.Intent, req.MaxOptions, req.Allowed)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"options": opts, "tsv": text})
}

// executeOpen opens (or reuses) an execute session and redirects to it.
func (a *App) executeOpen(c echo.Context) error {
	var req struct {
		EntryID  string   `json:"entry_id"`
		Entities []string `json:"entities"`
		Intent   string   `json:"intent"`
		Ranked   []string `json:"ranked_capabilities"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.EntryID == "" || len(req.Entities) == 0 {
		return problem.BadRequest("bad-open", "entry_id and a non-empty entities list are required")
	}
	seeds := make([]core.Seed, len(req.Entities))
	for i, e := range req.Entities {
		seeds[i] = core.Seed{Entry: req.EntryID, Entity: e}
	}
	op, err := a.svc.OpenExecute(c.Request().Context(), tenantOf(c), seeds, req.Intent, req.Ranked, "")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", executePath(op.Execute))
	return c.JSON(http.StatusSeeOther, map[string]any{
		"prompt_hash": op.Execute.PromptHash, "session_id": op.Execute.ID, "reused": op.Reused,
		"location": executePath(op.Execute),
	})
}

// maxSessionParam bounds the {ph} and {s} of an execute path: prompt hashes
// are 16 hex digits and session ids UUIDs.
const maxSessionParam = 64

func executePath(e session.Execute) string { return "/execute/" + e.PromptHash + "/" + e.ID }

func (a *App) loadExecute(c echo.Context) (session.Execute, error) {
	if len(c.Param("ph")) > maxSessionParam || len(c.Param("s")) > maxSessionParam {
		// No session has such a name; the store's message would quote it.
		return session.Execute{}, fmt.Errorf("execute session: %w", session.ErrNotFound)
	}
	ex, err := a.svc.Store().GetExecute(c.Request().Context(), tenantOf(c).ID, c.Param("ph"), c.Param("s"))
	if err == nil && ex.Principal != tenantOf(c).Principal {
		return session.Execute{}, session.ErrNotFound
	}
	return ex, err
}

func (a *App) executeGet(c echo.Context) error {
	ex, err := a.loadExecute(c)
	if err != nil {
		return err
	}
	var ents []string
	for _, e := range ex.Symbols.Entities {
		ents = append(ents, e.EntryID+":"+e.Name)
	}
	return c.JSON(http.StatusOK, map[string]any{
		"prompt_hash": ex.PromptHash, "session_id": ex.ID, "prompt": ex.Prompt, "entities": ents,
		"entries": ex.Entries, "domain_revision": ex.DomainRevision,
	})
}

func (a *App) executeContext(c echo.Context) error {
	var req struct {
		Seeds  []core.Seed `json:"seeds"`
		Intent string      `json:"intent"`
		Ranked []string    `json:"ranked_capabilities"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ex, err := a.loadExecute(c)
	if err != nil {
		return err
	}
	ext, err := a.svc.Extend(c.Request().Context(), tenantOf(c), ex, req.Seeds, req.Intent, req.Ranked)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"text": ext.Text, "unchanged": ext.Unchanged, "domain_revision": ext.Execute.DomainRevision})
}

// executeRun runs (or with ?mode=plan, plans) a program.
func (a *App) executeRun(c echo.Context) error {
	if err := checkRunQuery(c.Request().URL.RawQuery); err != nil {
		return err
	}
	program, err := readProgram(c)
	if err != nil {
		return err
	}
	ex, err := a.loadExecute(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t := tenantOf(c)
	if c.QueryParam("mode") == "plan" {
		p, err := a.svc.Plan(ctx, t, &ex, program)
		if err != nil {
			return err
		}
		body := map[string]any{"plan": p, "verdict": p.Verdict, "summary": p.Summary, "reads": executor.Reads(p, t.Limits.RunBudget())}
		pc, err := a.svc.CommitPlan(ctx, t, ex.ID, p)
		if err != nil {
			return err
		}
		if pc != "" {
			body["plan_commit_ref"] = pc
		}
		return c.JSON(http.StatusOK, body)
	}
	format, err := negotiate(c.Request().Header.Get("Accept"))
	if err != nil {
		return err
	}
	gate := core.Gate{Force: c.QueryParam("force") == "true", PlanCommitRef: c.QueryParam("plan_commit_ref")}
	ans, err := a.svc.Execute(ctx, t, core.RunScope{Execute: &ex, Ref: "s0", Gate: gate, CommitRef: gate.PlanCommitRef}, program, waitParam(c))
	if err != nil {
		return err
	}
	if ans.Outcome == nil {
		return operationResponse(c, format, ans)
	}
	out := ans.Outcome
	meta := runMeta(out)
	switch format {
	case "application/json":
		return c.JSON(http.StatusOK, map[string]any{"results": jsonRoots(out.Roots), "_meta": map[string]any{"plasm": meta}})
	case "application/x-ndjson":
		b, err := results.NDJSON(out.Roots)
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "application/x-ndjson", b)
	case "text/tab-separated-values":
		return c.Blob(http.StatusOK, "text/tab-separated-values; charset=utf-8", []byte(results.TSV(out.Roots)))
	}
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(results.Markdown(out.Roots)))
}

func (a *App) executeRuns(c echo.Context) error {
	ex, err := a.loadExecute(c)
	if err != nil {
		return err
	}
	runs, err := a.svc.Store().ListRuns(c.Request().Context(), tenantOf(c).ID, ex.PromptHash, ex.ID)
	if err != nil {
		return err
	}
	type item struct {
		RunID     string   `json:"run_id"`
		N         int      `json:"n"`
		Program   string   `json:"program"`
		Principal string   `json:"principal,omitempty"`
		Created   string   `json:"created"`
		Roots     []string `json:"roots"`
	}
	out := []item{}
	for _, r := range runs {
		it := item{RunID: r.RunID, N: r.N, Program: r.Program, Principal: r.Principal, Created: r.Created.Format("2006-01-02T15:04:05Z07:00")}
		for _, root := range r.Roots {
			it.Roots = append(it.Roots, root.Label)
		}
		out = append(out, it)
	}
	return c.JSON(http.StatusOK, map[string]any{"runs": out})
}

func (a *App) executeArtifact(c echo.Context) error {
	ex, err := a.loadExecute(c)
	if err != nil {
		return err
	}
	r, err := a.svc.Store().GetRun(c.Request().Context(), tenantOf(c).ID, ex.PromptHash, ex.ID, c.Param("run"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, artifactJSON(r))
}

// readProgram accepts text/plain or {"program": "..."}.
func readProgram(c echo.Context) (string, error) {
	ct, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return "", he
		}
		return "", problem.BadRequest("bad-body", "could not read the request body")
	}
	if ct == "application/json" {
		var req struct {
			Program *string `json:"program"`
		}
		if err := decodeJSONBody(body, &req); err != nil {
			return "", err
		}
		if req.Program == nil {
			return "", problem.BadRequest("missing-program", `the JSON body needs a "program" string`)
		}
		return *req.Program, nil
	}
	return string(body), nil
}

func bindJSON(c echo.Context, v any) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return he
		}
		return problem.BadRequest("bad-body", "could not read the request body")
	}
	return decodeJSONBody(body, v)
}

// negotiate picks a run result format from Accept (accept.go); the
// default is the same Markdown an MCP client sees.
func negotiate(accept string) (string, error) {
	if strings.TrimSpace(accept) == "" {
		return "text/markdown", nil
	}
	if f := pickMediaType(accept, resultFormats); f != "" {
		return f, nil
	}
	p := problem.New(http.StatusNotAcceptable, "not-acceptable", "supported: "+strings.Join(resultFormats, ", "))
	return "", p
}

// resultFormats are the formats a run answers in, the default first.
var resultFormats = []string{"text/markdown", "application/json", "application/x-ndjson", "text/tab-separated-values"}

func jsonRoots(roots []results.Root) []map[string]any {
	out := make([]map[string]any, 0, len(roots))
	for _, r := range roots {
		m := map[string]any{"label": r.Label, "columns": r.Table.Columns, "rows": results.Objects(r.Table), "count": len(r.Table.Rows)}
		if r.PageHandle != "" {
			m["page_handle"] = r.PageHandle
		}
		out = append(out, m)
	}
	return out
}

func artifactJSON(r session.Run) map[string]any {
	var roots []map[string]any
	for _, root := range r.Roots {
		m := map[string]any{"label": root.Label, "entry_id": root.EntryID, "entity": root.Entity,
			"columns": root.Table.Columns, "rows": results.Objects(root.Table), "count": len(root.Table.Rows)}
		if root.PageHandle != "" {
			m["page_handle"] = root.PageHandle
		}
		roots = append(roots, m)
	}
	m := map[string]any{"run_id": r.RunID, "n": r.N, "program": r.Program, "created": r.Created, "results": roots}
	if r.Principal != "" {
		m["principal"] = r.Principal
	}
	return m
}

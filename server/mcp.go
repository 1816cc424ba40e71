package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/text"
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/teaching"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

const mcpInstructions = `plasmd runs short programs against real APIs.
Flow: discover_capabilities (optional, once per goal, one intent sentence for the whole task)
→ plasm_context once per stable intent with seeds [{api, entity}] (returns a logical_session_ref such as s0 and a teaching table)
→ then mostly plasm (dry-run plan) and plasm_run (execute) with that logical_session_ref.
Use the e#/m#/p#/r# symbols from the teaching table or wire names. Fill $ cues with real values and remove "..". Do not call plasm_context again unless you need new seeds or a new intent.`

// Tool inputs. Field docs become the tools' JSON schema descriptions.
type discoverIn struct {
	Intent     string   `json:"intent" jsonschema:"one sentence describing the whole goal"`
	MaxOptions int      `json:"max_options,omitempty" jsonschema:"how many rows to return (default 12)"`
	Allowed    []string `json:"allowed_entry_ids,omitempty" jsonschema:"restrict to these catalogs"`
}

type contextIn struct {
	Intent string      `json:"intent,omitempty" jsonschema:"stable host-chosen string naming this agent context; may be omitted when announced in initialize _meta.plasm.intent"`
	Seeds  []core.Seed `json:"seeds" jsonschema:"entities to expose: [{api, entity}]"`
	Ranked []string    `json:"ranked_capabilities,omitempty" jsonschema:"capability names to expose even without intent overlap"`
	// Refresh resends the session's whole teaching table (an agent that
	// lost it, e.g. restarted with the same intent); never sent unasked.
	Refresh bool `json:"refresh,omitempty" jsonschema:"true to get the session's whole teaching table again (if you lost it)"`
}

type programIn struct {
	Ref     string `json:"logical_session_ref" jsonschema:"the ref plasm_context returned (s0), or its session_handle (works from any connection)"`
	Program string `json:"program" jsonschema:"a plasm program (real newlines between lines)"`
}

type runIn struct {
	Ref     string `json:"logical_session_ref" jsonschema:"the ref plasm_context returned (s0), or its session_handle (works from any connection)"`
	Program string `json:"program" jsonschema:"a plasm program (real newlines between lines)"`
	// Wait false runs the program as an operation (core/operations.go);
	// absent, the server decides by the plan's cost.
	Wait          *bool  `json:"wait,omitempty" jsonschema:"false: return wait(sN_oM) at once and work in the background"`
	Force         bool   `json:"force,omitempty" jsonschema:"true runs a review plan without a plan_commit_ref"`
	PlanCommitRef string `json:"plan_commit_ref,omitempty" jsonschema:"the pcN a plasm dry run of this same program returned (single use, valid 10 minutes)"`
}

// mcpSessions names transport sessions: the Mcp-Session-Id when there is
// one, else (stdio) an id minted per connection.
type mcpSessions struct {
	mu  sync.Mutex
	ids map[*mcp.ServerSession]string
	// ending holds, per session being ended, a channel closed when its
	// release has run (see end).
	ending map[*mcp.ServerSession]chan struct{}
}

// id names the transport a call arrived on. Streamable HTTP sessions have
// an Mcp-Session-Id. Stateless HTTP (no session id, but HTTP headers) has no
// transport to key on, so its refs live in one per-tenant scope that any
// replica can resolve. stdio gets one id per connection.
func (m *mcpSessions) id(ss *mcp.ServerSession, extra *mcp.RequestExtra, t *tenant.Tenant) string {
	if ss != nil {
		if id := ss.ID(); id != "" {
			return "mcp:" + id
		}
	}
	if extra != nil && extra.Header != nil || ss == nil {
		return "stateless:" + t.Scope()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil {
		m.ids = map[*mcp.ServerSession]string{}
	}
	id, ok := m.ids[ss]
	if !ok {
		id = "conn-" + uuid.NewString()
		m.ids[ss] = id
	}
	return id
}

// forget drops a closed session and returns the transport id its refs were
// minted under ("" for stateless calls, whose scope is the tenant's).
func (m *mcpSessions) forget(ss *mcp.ServerSession) string {
	if id := ss.ID(); id != "" {
		return "mcp:" + id
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.ids[ss]
	delete(m.ids, ss)
	return id
}

// end forgets ss and calls release with its transport id, once however
// many callers end it at the same time, and returns only after release
// has returned. Two do over stdio: the session's watcher and ServeStdio,
// whose return lets the process close the session store; had ServeStdio
// returned while the watcher was still releasing, the release failed
// against a closed store and the transport's refs stayed in a shared
// store (a one-shot stdio client leaked them once per process).
func (m *mcpSessions) end(ss *mcp.ServerSession, release func(id string)) {
	m.mu.Lock()
	if done, ok := m.ending[ss]; ok {
		m.mu.Unlock()
		<-done
		return
	}
	if m.ending == nil {
		m.ending = map[*mcp.ServerSession]chan struct{}{}
	}
	done := make(chan struct{})
	m.ending[ss] = done
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.ending, ss)
		m.mu.Unlock()
		close(done)
	}()
	if id := m.forget(ss); id != "" {
		release(id)
	}
}

// endTransport releases what a closed MCP session held: its refs (the
// logical sessions they named live on) and its id.
func (a *App) endTransport(ss *mcp.ServerSession) {
	a.mcpIDs.end(ss, func(id string) {
		if err := a.svc.Store().ForgetTransport(context.Background(), id); err != nil {
			a.log.Warn("forget MCP transport", "transport", id, "err", err)
		}
	})
}

func (a *App) newMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "plasmd", Version: Version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       a.mcpLog,
		// Watch each initialised session so its refs are released when
		// it closes (client DELETE, idle timeout, stdio EOF).
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			ss := req.Session
			go func() {
				_ = ss.Wait()
				a.endTransport(ss)
			}()
		},
		SetCacheable: privateResourceReads,
	})
	s.AddReceivingMiddleware(a.rateLimitTools)
	s.AddReceivingMiddleware(a.notifyMiddleware)
	s.AddReceivingMiddleware(levelGuard)
	// Outermost, so it sees the result every other middleware returns.
	s.AddReceivingMiddleware(a.encodableResults)
	mcp.AddTool(s, discoverTool(), a.toolDiscover)
	mcp.AddTool(s, contextTool(), a.toolContext)
	mcp.AddTool(s, planTool(), a.toolPlan)
	mcp.AddTool(s, runTool(), a.toolRun)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "run", URITemplate: "plasm://session/{ref}/r/{n}", MIMEType: "application/json", Description: "A run's full results, by logical session ref and run number"}, a.readRunResource)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "teaching", URITemplate: "plasm://session/{ref}/teaching", MIMEType: "text/markdown", Description: "The logical session's whole teaching table (first wave and every delta), by ref or session handle"}, a.readTeachingResource)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "run-canonical", URITemplate: "plasm://execute/{prompt_hash}/{session_id}/run/{run_id}", MIMEType: "application/json", Description: "A run's full results, by canonical id"}, a.readRunResource)
	return s
}

// privateResourceReads marks every resources/read result cacheable by the
// requesting client only. The SDK's default scope is "public" (any client
// or intermediary may cache and serve it), but a resource here is one
// tenant's run results or teaching table: a shared MCP gateway honouring
// "public" could hand them to another tenant asking for the same URI
// (plasm://session/s0/r/1 names a different run on every connection).
func privateResourceReads(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.(*mcp.ReadResourceRequest); ok {
		c.CacheScope = "private"
	}
}

// mcpTenant resolves the tenant of a tool call: from the HTTP bearer token
// on Streamable HTTP, or the stdio tenant.
func (a *App) mcpTenant(req *mcp.CallToolRequest) (*tenant.Tenant, error) {
	return a.mcpTenantFromHeader(req.Extra)
}

func (a *App) mcpTenantFromHeader(extra *mcp.RequestExtra) (*tenant.Tenant, error) {
	if t, ok := callerFromExtra(extra); ok {
		return t, nil
	}
	if extra == nil || extra.Header == nil {
		return a.stdioTenant, nil
	}
	return a.tenantFor(&http.Request{Header: extra.Header})
}

// toolError renders an error as a tool result the model can read and act
// on, with the same fields the HTTP problem carries.
func toolError(err error, meta map[string]any) *mcp.CallToolResult {
	p := problem.From(err)
	var b strings.Builder
	b.WriteString("Error: ")
	if p.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", p.Line, p.Column)
	}
	b.WriteString(p.Detail)
	if p.Hint != "" {
		b.WriteString("\nHint: " + p.Hint)
	}
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}
	sc := map[string]any{"error": p}
	if meta != nil {
		res.Meta = mcp.Meta{"plasm": meta}
		sc["_meta"] = map[string]any{"plasm": meta}
	}
	res.StructuredContent = sc
	return res
}

// withMeta builds a successful result with _meta.plasm mirrored into
// structuredContent (some hosts drop _meta).
func withMeta(text string, meta map[string]any, extra map[string]any) *mcp.CallToolResult {
	sc := map[string]any{"_meta": map[string]any{"plasm": meta}}
	for k, v := range extra {
		sc[k] = v
	}
	return &mcp.CallToolResult{
		Meta:              mcp.Meta{"plasm": meta},
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: sc,
	}
}

func (a *App) toolDiscover(ctx context.Context, req *mcp.CallToolRequest, in discoverIn) (*mcp.CallToolResult, any, error) {
	t, err := a.mcpTenant(req)
	if err != nil {
		return toolError(problem.New(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required"), nil), nil, nil
	}
	text, opts, err := a.svc.Discover(t, in.Intent, in.MaxOptions, in.Allowed)
	if err != nil {
		return toolError(err, nil), nil, nil
	}
	return withMeta(text, map[string]any{"options": len(opts)}, map[string]any{"options": opts}), nil, nil
}

// sessionIntent reads the intent a client announced in initialize _meta
// (seed 003): _meta.plasm.intent, or the compatibility key "plasm.intent".
// Empty strings are ignored. Per-request _meta is read the same way so the
// stateless protocol works too.
func sessionIntent(metas ...map[string]any) string {
	for _, m := range metas {
		if m == nil {
			continue
		}
		if p, ok := m["plasm"].(map[string]any); ok {
			if s, ok := p["intent"].(string); ok && strings.TrimSpace(s) != "" {
				return s
			}
		}
		if s, ok := m["plasm.intent"].(string); ok && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func (a *App) toolContext(ctx context.Context, req *mcp.CallToolRequest, in contextIn) (*mcp.CallToolResult, any, error) {
	t, err := a.mcpTenant(req)
	if err != nil {
		return toolError(problem.New(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required"), nil), nil, nil
	}
	var initMeta map[string]any
	if req.Session != nil {
		if ip := req.Session.InitializeParams(); ip != nil {
			initMeta = ip.Meta
		}
	}
	announced := sessionIntent(req.Params.Meta, initMeta)
	intent := in.Intent
	switch {
	case strings.TrimSpace(intent) == "" && announced != "":
		intent = announced
	case strings.TrimSpace(intent) == "":
		return toolError(problem.BadRequest("missing-intent", "missing intent: pass intent, or announce _meta.plasm.intent in initialize"), nil), nil, nil
	case announced != "" && announced != intent:
		a.log.Info("plasm_context: explicit intent differs from session context; using the explicit one",
			"explicit", text.Clip(intent, 200), "session", text.Clip(announced, 200))
	}
	out, err := a.svc.Context(ctx, t, a.mcpIDs.id(req.Session, req.Extra, t), intent, in.Seeds, in.Ranked)
	if err != nil {
		return toolError(err, nil), nil, nil
	}
	meta := contextMeta(out)
	text := out.Text
	if in.Refresh && out.Wave != teaching.First {
		text = "`" + out.Ref + "`\n\n" + out.Execute.Prompt
	}
	return withMeta(text, meta, nil), nil, nil
}

func contextMeta(out *core.ContextResult) map[string]any {
	cont := map[string]any{
		"stale_binding_recovered": out.Continuity.StaleBindingRecovered,
		"new_symbol_space":        out.Continuity.NewSymbolSpace,
	}
	if out.Continuity.NewSymbolSpace {
		cont["discard_cached_plasm_symbols"] = true
	}
	if out.Continuity.PreviousExecute != nil {
		cont["previous_execute"] = out.Continuity.PreviousExecute
	}
	meta := map[string]any{
		"continuity":        cont,
		"domain_revision":   out.Execute.DomainRevision,
		"catalog_entry_ids": out.Execute.Entries,
	}
	sessionMetaFields(meta, out.Ref, out.LogicalID)
	if out.Execute.Principal != "" {
		meta["principal"] = out.Execute.Principal
	}
	return meta
}

// sessionFor resolves a logical_session_ref (or canonical session handle)
// to its live execute session, the logical id and the ref naming it on this
// connection. A stale binding is an error telling the agent to call
// plasm_context again.
func (a *App) sessionFor(ctx context.Context, t *tenant.Tenant, transport, ref string) (session.Execute, string, string, error) {
	id, sref, err := a.resolveSession(ctx, t, transport, ref)
	if err != nil {
		return session.Execute{}, "", "", err
	}
	l, err := a.svc.Store().GetLogical(ctx, t.ID, id)
	if storeUnavailable(err) {
		return session.Execute{}, "", "", err
	}
	if err != nil || l.Binding == nil {
		p := problem.NotFound("logical session %s has no execute session", ref)
		p.Hint = "call plasm_context again with the same intent"
		return session.Execute{}, "", "", p
	}
	ex, err := a.svc.Store().GetExecute(ctx, t.ID, l.Binding.PromptHash, l.Binding.SessionID)
	if err == nil && ex.Principal != t.Principal {
		return session.Execute{}, "", "", problem.NotFound("logical_session_ref %q is unknown on this connection", ref)
	}
	if storeUnavailable(err) {
		return session.Execute{}, "", "", err
	}
	if err != nil {
		return session.Execute{}, "", "", staleSession(ref)
	}
	return ex, id, sref, nil
}

func (a *App) baseMeta(ref, logicalID string, ex session.Execute) map[string]any {
	meta := map[string]any{
		"domain_revision":   ex.DomainRevision,
		"catalog_entry_ids": ex.Entries,
	}
	sessionMetaFields(meta, ref, logicalID)
	if ex.Principal != "" {
		meta["principal"] = ex.Principal
	}
	return meta
}

func (a *App) toolPlan(ctx context.Context, req *mcp.CallToolRequest, in programIn) (*mcp.CallToolResult, any, error) {
	t, err := a.mcpTenant(req)
	if err != nil {
		return toolError(problem.New(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required"), nil), nil, nil
	}
	ex, lid, ref, err := a.sessionFor(ctx, t, a.mcpIDs.id(req.Session, req.Extra, t), in.Ref)
	if err != nil {
		return toolError(err, nil), nil, nil
	}
	meta := a.baseMeta(ref, lid, ex)
	p, err := a.svc.Plan(ctx, t, &ex, in.Program)
	if err != nil {
		return toolError(err, meta), nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", p.Summary)
	for _, id := range p.Order {
		n := p.Nodes[id]
		fmt.Fprintf(&b, "- n%d %s %s", n.ID, n.Op, n.Effect)
		if n.Capability != "" {
			fmt.Fprintf(&b, " %s", n.Capability)
		}
		if n.Entity != "" {
			fmt.Fprintf(&b, " → %s%s", n.Entity, map[bool]string{true: "[]", false: ""}[n.Many])
		}
		if len(n.Deps) > 0 || n.Input >= 0 {
			fmt.Fprintf(&b, " (after %s)", depList(n.Input, n.Deps))
		}
		b.WriteByte('\n')
	}
	for _, r := range p.Reasons {
		fmt.Fprintf(&b, "review: %s\n", r)
	}
	for _, r := range executor.Reads(p, t.Limits.RunBudget()) {
		fmt.Fprintf(&b, "reads: %s\n", r)
	}
	pc, err := a.svc.CommitPlan(ctx, t, lid, p)
	if err != nil {
		return toolError(err, meta), nil, nil
	}
	if pc != "" {
		fmt.Fprintf(&b, "plan_commit_ref: %s (pass it to plasm_run with this program; single use, valid 10 minutes)\n", pc)
		meta["plan_commit_ref"] = pc
	}
	meta["verdict"] = p.Verdict
	return withMeta(b.String(), meta, map[string]any{"plan": p}), nil, nil
}

func depList(input int, deps []int) string {
	var parts []string
	if input >= 0 {
		parts = append(parts, fmt.Sprintf("n%d", input))
	}
	for _, d := range deps {
		if d != input {
			parts = append(parts, fmt.Sprintf("n%d", d))
		}
	}
	return strings.Join(parts, ", ")
}

func (a *App) toolRun(ctx context.Context, req *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, any, error) {
	t, err := a.mcpTenant(req)
	if err != nil {
		return toolError(problem.New(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required"), nil), nil, nil
	}
	transport := a.mcpIDs.id(req.Session, req.Extra, t)
	ex, lid, ref, err := a.sessionFor(ctx, t, transport, in.Ref)
	if err != nil {
		return toolError(err, nil), nil, nil
	}
	meta := a.baseMeta(ref, lid, ex)
	ctx, notify := a.runNotifications(ctx, req, ref)
	ans, err := a.svc.Execute(ctx, t, core.RunScope{Execute: &ex, LogicalID: lid, Ref: ref, Transport: transport, CommitRef: in.PlanCommitRef,
		Gate: core.Gate{Force: in.Force, PlanCommitRef: in.PlanCommitRef}, ByHandle: core.IsSessionHandle(in.Ref) || in.Ref == lid}, in.Program, in.Wait)
	notify(ans, err)
	if err != nil {
		return toolError(err, meta), nil, nil
	}
	return answerResult(ans, meta), nil, nil
}

// runMeta is the per-run part of _meta.plasm.
func runMeta(out *core.RunOutcome) map[string]any {
	var paging []map[string]any
	for _, r := range out.Roots {
		if r.PageHandle != "" {
			paging = append(paging, map[string]any{"label": r.Label, "handle": r.PageHandle, "continue": "page(" + r.PageHandle + ")"})
		}
	}
	m := map[string]any{
		"run_id":        out.Run.RunID,
		"run_uri":       out.ShortURI,
		"canonical_uri": out.CanonicalURI,
		"steps":         out.Steps,
		"verdict":       out.Plan.Verdict,
	}
	if paging != nil {
		m["paging"] = paging
	}
	if out.TraceID != "" {
		m["trace_id"] = out.TraceID
	}
	return m
}

// readRunResource serves plasm://session/{ref}/r/{n} and the canonical
// plasm://execute/{ph}/{s}/run/{id}. Another tenant's run is "not found".
func (a *App) readRunResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	t, err := a.mcpTenantFromHeader(req.Extra)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	uri := req.Params.URI
	var run session.Run
	switch {
	case strings.HasPrefix(uri, "plasm://session/"):
		var ref string
		var n int
		rest := strings.TrimPrefix(uri, "plasm://session/")
		ref, num, ok := strings.Cut(rest, "/r/")
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		if _, err := fmt.Sscanf(num, "%d", &n); err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		lid, _, err := a.resolveSession(ctx, t, a.mcpIDs.id(req.Session, req.Extra, t), ref)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		if run, err = a.svc.Store().GetRunByIndex(ctx, t.ID, lid, n); err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
	case strings.HasPrefix(uri, "plasm://execute/"):
		parts := strings.Split(strings.TrimPrefix(uri, "plasm://execute/"), "/")
		if len(parts) != 4 || parts[2] != "run" {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		if run, err = a.svc.Store().GetRun(ctx, t.ID, parts[0], parts[1], parts[3]); err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
	default:
		return nil, mcp.ResourceNotFoundError(uri)
	}
	// Another principal's run reads as absent, like another tenant's.
	if run.Principal != t.Principal {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	b, err := json.Marshal(artifactJSON(run))
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

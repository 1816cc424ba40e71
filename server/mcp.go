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
	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/results"
	"github.com/plasmd/plasmd/server/internal/session"
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
}

type programIn struct {
	Ref     string `json:"logical_session_ref" jsonschema:"the ref plasm_context returned, e.g. s0"`
	Program string `json:"program" jsonschema:"a plasm program (real newlines between lines)"`
}

type runIn struct {
	Ref     string `json:"logical_session_ref" jsonschema:"the ref plasm_context returned, e.g. s0"`
	Program string `json:"program" jsonschema:"a plasm program (real newlines between lines)"`
	// Accepted so clients written for Plasm's flow do not fail validation;
	// this server runs every plan synchronously and does not yet gate
	// review plans, so they change nothing (see README status).
	Wait          *bool  `json:"wait,omitempty" jsonschema:"accepted for compatibility; runs are always synchronous here"`
	Force         bool   `json:"force,omitempty" jsonschema:"accepted for compatibility; review plans are not gated by this server yet"`
	PlanCommitRef string `json:"plan_commit_ref,omitempty" jsonschema:"accepted for compatibility; review plans are not gated by this server yet"`
}

// mcpSessions names transport sessions: the Mcp-Session-Id when there is
// one, else (stdio) an id minted per connection.
type mcpSessions struct {
	mu  sync.Mutex
	ids map[*mcp.ServerSession]string
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

// endTransport releases what a closed MCP session held: its refs (the
// logical sessions they named live on) and its id.
func (a *App) endTransport(ss *mcp.ServerSession) {
	if id := a.mcpIDs.forget(ss); id != "" {
		if err := a.svc.Store().ForgetTransport(context.Background(), id); err != nil {
			a.log.Warn("forget MCP transport", "transport", id, "err", err)
		}
	}
}

func (a *App) newMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "plasmd", Version: Version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       a.log,
		// Watch each initialised session so its refs are released when
		// it closes (client DELETE, idle timeout, stdio EOF).
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			ss := req.Session
			go func() {
				_ = ss.Wait()
				a.endTransport(ss)
			}()
		},
	})
	s.AddReceivingMiddleware(a.rateLimitTools)
	s.AddReceivingMiddleware(a.notifyMiddleware)
	mcp.AddTool(s, &mcp.Tool{Name: "discover_capabilities", Description: "Rank catalog entities for one intent sentence describing the whole goal. Returns TSV rows api/entity/description; copy api and entity into plasm_context seeds."}, a.toolDiscover)
	mcp.AddTool(s, &mcp.Tool{Name: "plasm_context", Description: "Open or extend the logical session for an intent with entity seeds. First line is the logical_session_ref (`s0`); then the teaching table (first open) or only new rows (expand/federate), or one line when nothing changed."}, a.toolContext)
	mcp.AddTool(s, &mcp.Tool{Name: "plasm", Description: "Dry-run a program: parse, expand symbols, type-check and plan without calling any backend. Returns the plan summary and verdict."}, a.toolPlan)
	mcp.AddTool(s, &mcp.Tool{Name: "plasm_run", Description: "Run a program against the live backends. Results: one `## label (n rows)` heading and a TSV table per root."}, a.toolRun)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "run", URITemplate: "plasm://session/{ref}/r/{n}", MIMEType: "application/json", Description: "A run's full results, by logical session ref and run number"}, a.readRunResource)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "run-canonical", URITemplate: "plasm://execute/{prompt_hash}/{session_id}/run/{run_id}", MIMEType: "application/json", Description: "A run's full results, by canonical id"}, a.readRunResource)
	return s
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
		a.log.Info("plasm_context: explicit intent differs from session context; using the explicit one", "explicit", intent, "session", announced)
	}
	out, err := a.svc.Context(ctx, t, a.mcpIDs.id(req.Session, req.Extra, t), intent, in.Seeds, in.Ranked)
	if err != nil {
		return toolError(err, nil), nil, nil
	}
	if a.cfg.MCPStateless {
		canonicalRef(out)
	}
	meta := contextMeta(out)
	return withMeta(out.Text, meta, nil), nil, nil
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
	m := map[string]any{
		"logical_session_ref": out.Ref,
		"logical_session_id":  out.LogicalID,
		"continuity":          cont,
		"domain_revision":     out.Execute.DomainRevision,
		"catalog_entry_ids":   out.Execute.Entries,
	}
	if out.Execute.Principal != "" {
		m["principal"] = out.Execute.Principal
	}
	return m
}

// sessionFor resolves a logical_session_ref to its live execute session.
// A stale binding is an error telling the agent to call plasm_context again.
func (a *App) sessionFor(ctx context.Context, t *tenant.Tenant, transport, ref string) (session.Execute, string, error) {
	if strings.TrimSpace(ref) == "" {
		return session.Execute{}, "", problem.BadRequest("missing-ref", "logical_session_ref is required (call plasm_context first)")
	}
	id, err := a.resolveRef(ctx, transport, t, ref)
	if storeUnavailable(err) {
		return session.Execute{}, "", err
	}
	if err != nil {
		p := problem.NotFound("logical_session_ref %q is unknown on this connection", ref)
		p.Hint = "call plasm_context with your intent and seeds; it returns the ref to use"
		return session.Execute{}, "", p
	}
	l, err := a.svc.Store().GetLogical(ctx, t.ID, id)
	if storeUnavailable(err) {
		return session.Execute{}, "", err
	}
	if err != nil || l.Binding == nil {
		p := problem.NotFound("logical session %s has no execute session", ref)
		p.Hint = "call plasm_context again with the same intent"
		return session.Execute{}, "", p
	}
	ex, err := a.svc.Store().GetExecute(ctx, t.ID, l.Binding.PromptHash, l.Binding.SessionID)
	if err == nil && ex.Principal != t.Principal {
		return session.Execute{}, "", problem.NotFound("logical_session_ref %q is unknown on this connection", ref)
	}
	if storeUnavailable(err) {
		return session.Execute{}, "", err
	}
	if err != nil {
		p := problem.New(http.StatusGone, "stale-session", fmt.Sprintf("the execute session behind %s expired or is gone; its symbols are void", ref))
		p.Hint = "call plasm_context again with the same intent to open a new session, then use only the new table's symbols"
		return session.Execute{}, "", p
	}
	return ex, id, nil
}

func (a *App) baseMeta(ref, logicalID string, ex session.Execute) map[string]any {
	m := map[string]any{
		"logical_session_ref": ref,
		"logical_session_id":  logicalID,
		"domain_revision":     ex.DomainRevision,
		"catalog_entry_ids":   ex.Entries,
	}
	if ex.Principal != "" {
		m["principal"] = ex.Principal
	}
	return m
}

func (a *App) toolPlan(ctx context.Context, req *mcp.CallToolRequest, in programIn) (*mcp.CallToolResult, any, error) {
	t, err := a.mcpTenant(req)
	if err != nil {
		return toolError(problem.New(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required"), nil), nil, nil
	}
	ex, lid, err := a.sessionFor(ctx, t, a.mcpIDs.id(req.Session, req.Extra, t), in.Ref)
	if err != nil {
		return toolError(err, nil), nil, nil
	}
	meta := a.baseMeta(in.Ref, lid, ex)
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
	ex, lid, err := a.sessionFor(ctx, t, transport, in.Ref)
	if err != nil {
		return toolError(err, nil), nil, nil
	}
	meta := a.baseMeta(in.Ref, lid, ex)
	out, err := a.svc.Run(ctx, t, core.RunScope{Execute: &ex, LogicalID: lid, Ref: a.runRef(ctx, transport, t, in.Ref, lid), CommitRef: in.PlanCommitRef}, in.Program)
	if err != nil {
		return toolError(err, meta), nil, nil
	}
	for k, v := range runMeta(out) {
		meta[k] = v
	}
	return withMeta(results.Markdown(out.Roots), meta, map[string]any{"results": jsonRoots(out.Roots)}), nil, nil
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
		lid, err := a.resolveRef(ctx, a.mcpIDs.id(req.Session, req.Extra, t), t, ref)
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

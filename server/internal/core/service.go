package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/internal/text"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/audit"
	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/credstore"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/ratelimit"
	"github.com/plasmd/plasmd/server/internal/results"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/tenant"
	"github.com/plasmd/plasmd/server/internal/tracing"
)

// Service is what both surfaces (HTTP and MCP) call: sessions, teaching,
// planning and runs for a tenant. It owns no transport concerns.
type Service struct {
	log      *slog.Logger
	registry *Registry
	host     *sandbox.Host
	engine   *sandbox.Module
	exec     *executor.Executor
	store    session.Store
	limits   sandbox.Limits
	vendors  *vendors
	plans    *planCache
	// journal remembers recent runs for the console; tracer traces them
	// (observe.go).
	journal *activity.Journal
	tracer  *tracing.Tracer
	// creds holds per-principal upstream credentials (nil = none stored).
	creds credstore.Store
	// audit records mutations and review-gated runs (nil = not recorded).
	audit audit.Log
	// limiter enforces tenants' rate_limits.
	limiter ratelimit.Limiter
	// exchange performs token exchange for catalogs configured for it.
	exchange TokenExchanger
	bus      *bus.Bus
	// symbols holds encoded symbol maps per session revision (symcache.go).
	symbols *symbolCache
	// ops runs long operations (operations.go).
	ops *opRunner

	mu        sync.Mutex
	sandboxes map[string]*sandbox.Engine
	// Lock order: logical → execute → reuse.
	logicalLocks, reuseLocks, executeLocks stripedLocks
}

// Seed names an entity to expose: an entry id (or alias) and an entity.
type Seed struct {
	API    string `json:"api,omitempty"`
	Entry  string `json:"entry_id,omitempty"`
	Entity string `json:"entity"`
}

func (s Seed) name() string {
	if s.Entry != "" {
		return s.Entry
	}
	return s.API
}

// sandboxFor returns the tenant's sandbox, creating it on first use with
// the catalogs the tenant may see. Sandboxes are never shared across tenants.
func (s *Service) sandboxFor(t *tenant.Tenant) *sandbox.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb, ok := s.sandboxes[t.ID]; ok {
		return sb
	}
	sb := sandbox.NewEngine(s.host.Tenant(t.ID, sandbox.TenantSpec{
		Module: s.engine,
		Loads:  sandbox.CatalogLoads(s.registry.Visible(t.Allows)),
		Limits: t.Limits.Apply(s.limits),
	}))
	s.sandboxes[t.ID] = sb
	return sb
}

// stripedLocks serialise work per key with a fixed set of mutexes, so the
// number of keys clients invent never grows memory. Two keys may share a
// stripe; that only costs concurrency. Each kind of key has its own
// stripes, so code holding one kind may take another without deadlock.
type stripedLocks [64]sync.Mutex

func (st *stripedLocks) lock(key string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &st[h.Sum32()%uint32(len(st))]
	m.Lock()
	return m.Unlock
}

// resolveSeeds maps seeds to (catalog, entity), enforcing the tenant's
// catalog allowlist. A disallowed or unknown catalog fails the whole call
// and reads as "not found" either way.
func (s *Service) resolveSeeds(t *tenant.Tenant, seeds []Seed) ([]resolvedSeed, error) {
	if len(seeds) == 0 {
		return nil, problem.BadRequest("missing-seeds", "seeds must name at least one {api, entity}")
	}
	if len(seeds) > 64 {
		return nil, problem.BadRequest("too-many-seeds", "at most 64 seeds per call (got %d)", len(seeds))
	}
	var out []resolvedSeed
	for i, sd := range seeds {
		name := strings.TrimSpace(sd.name())
		if name == "" {
			return nil, problem.BadRequest("bad-seed", "seeds[%d]: api (or entry_id) is required", i)
		}
		cat, ok := s.registry.Resolve(name)
		if !ok || !t.Allows(cat.EntryID) {
			p := problem.NotFound("seeds[%d]: catalog %q is not in this tenant's registry", i, name)
			p.Hint = "available: " + strings.Join(s.visibleIDs(t), ", ")
			return nil, p
		}
		e, ok := cat.Entities[sd.Entity]
		if !ok || e.Abstract {
			p := problem.NotFound("seeds[%d]: catalog %q has no entity %q", i, cat.EntryID, sd.Entity)
			p.Hint = "entities: " + strings.Join(exposedEntities(cat), ", ")
			return nil, p
		}
		out = append(out, resolvedSeed{cat: cat, entity: sd.Entity})
	}
	return out, nil
}

type resolvedSeed struct {
	cat    *catalog.Catalog
	entity string
}

func (s *Service) visibleIDs(t *tenant.Tenant) []string {
	var ids []string
	for _, c := range s.registry.Visible(t.Allows) {
		ids = append(ids, c.EntryID)
	}
	return ids
}

func exposedEntities(c *catalog.Catalog) []string {
	var names []string
	for n, e := range c.Entities {
		if !e.Abstract {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// reuseKey is the SessionReuseKey of seed 000: tenant scope, primary entry
// (lexicographically first catalog among the seeds), its catalog digest, the
// sorted deduplicated primary-catalog entities, the vendor module digest, and
// the logical session id. principal is set when auth resolution is
// delegated (an OAuth access token names the person): two principals with
// the same intent never share an execute row or its symbols.
func reuseKey(tenantID, principal string, seeds []resolvedSeed, logicalID string) string {
	primary := primaryEntry(seeds)
	var ents []string
	var cat *catalog.Catalog
	for _, sd := range seeds {
		if sd.cat.EntryID == primary {
			ents = append(ents, sd.entity)
			cat = sd.cat
		}
	}
	slices.Sort(ents)
	ents = slices.Compact(ents)
	module := ""
	if cat.Module != nil {
		module = cat.Module.SHA256
	}
	parts := []string{tenantID, primary, cat.Digest, strings.Join(ents, ","), principal, module, logicalID}
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])
}

// openScope is the SessionReuseKey's last part: the logical session when
// there is one (MCP: it stands for the tenant's intent), else the intent
// and ranked capabilities themselves (HTTP POST /execute has no logical
// session). The intent's words and the ranked names decide which
// mutators a session teaches, so an HTTP open with another intent must
// not be handed a session taught for the first one: its table, symbols,
// runs and handles stay that intent's. Ranked names are a set.
func openScope(logicalID, intent string, ranked []string) string {
	if logicalID != "" {
		return logicalID
	}
	r := slices.Clone(ranked)
	slices.Sort(r)
	r = slices.Compact(r)
	// JSON keeps the parts apart whatever they hold, and a logical
	// session id (a UUID) never starts with "http".
	b, _ := json.Marshal(struct {
		Intent string   `json:"intent"`
		Ranked []string `json:"ranked"`
	}{intent, r})
	return "http" + string(b)
}

func primaryEntry(seeds []resolvedSeed) string {
	primary := seeds[0].cat.EntryID
	for _, sd := range seeds[1:] {
		if sd.cat.EntryID < primary {
			primary = sd.cat.EntryID
		}
	}
	return primary
}

// Plan parses, expands, checks and plans a program in the tenant's sandbox.
func (s *Service) Plan(ctx context.Context, t *tenant.Tenant, ex *session.Execute, program string) (*plan.Plan, error) {
	if strings.TrimSpace(program) == "" {
		return nil, &abi.Error{Code: abi.CodeSyntax, Message: "empty program", Line: 1, Column: 1, Hint: "send an expression such as Entity(\"id\") or a taught row with its $ filled in"}
	}
	// The engine refuses it too; checked here as well so no engine build
	// (an older engine.wasm) can let a replaced byte through.
	if off, line, col, bad := text.InvalidUTF8(program); bad {
		return nil, &abi.Error{Code: abi.CodeSyntax, Message: text.InvalidUTF8Message(program, off), Line: line, Column: col, Hint: text.InvalidUTF8Hint}
	}
	digests := make([]string, 0, len(ex.Entries))
	for _, e := range ex.Entries {
		if c, ok := s.registry.byID[e]; ok {
			digests = append(digests, c.Digest)
		}
	}
	sym, err := s.symbols.get(t.ID, ex)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	// The map's digest joins the key: replicas sharing a store could write
	// one revision twice with different maps, and a plan is only valid for
	// the map it was planned against.
	key := planKey(t.ID, ex.ID, ex.DomainRevision, s.engine.Digest, append(digests, sym.Digest()), program)
	if p, ok := s.plans.get(key); ok {
		s.tracer.PlanCached(ctx)
		return p, nil
	}
	sb := s.sandboxFor(t)
	pctx, span := s.tracer.Plan(ctx)
	p, err := sb.PlanWith(pctx, &abi.PlanRequest{Program: program, Entries: ex.Entries}, sym)
	span.End(err)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	s.plans.put(key, p)
	return p, nil
}

// RunScope identifies where a run's artifacts and handles live.
type RunScope struct {
	Execute *session.Execute
	// LogicalID is set for MCP runs; HTTP runs scope to the execute session.
	LogicalID string
	// Ref is the logical session ref (s0 for HTTP runs).
	Ref string
	// CommitRef is the plan_commit_ref the client passed, for the audit log.
	CommitRef string
	// Transport is the MCP transport the run arrived on ("" for HTTP);
	// paging handles minted on another connection are checked against it.
	Transport string
	// Gate is what the run presents to pass review gating (gate.go).
	Gate Gate
	// ByHandle: the caller named the session by its canonical handle (a
	// client that connects per call), so its page and operation handles
	// may carry the sN of an earlier connection.
	ByHandle bool
}

func (r RunScope) scope() string {
	if r.LogicalID != "" {
		return r.LogicalID
	}
	return r.Execute.ID
}

// RunOutcome is a finished run with its rendered roots.
type RunOutcome struct {
	Run                    session.Run
	Plan                   *plan.Plan
	Roots                  []results.Root
	Steps                  []executor.Step
	ShortURI, CanonicalURI string
	// TraceID is the run's OpenTelemetry trace (its logical session's).
	TraceID string
}

// runProgram plans and executes a program, stores the run artifact and
// mints paging handles for lists that continue. Run (observe.go) wraps it;
// a failed execution still returns its plan, for the console.
func (s *Service) runProgram(ctx context.Context, t *tenant.Tenant, sc RunScope, program string) (*RunOutcome, error) {
	p, err := s.Plan(ctx, t, sc.Execute, program)
	if err != nil {
		return nil, err
	}
	if err := s.checkPageHandles(ctx, t, sc, p); err != nil {
		return nil, err
	}
	if err := s.checkGate(ctx, t, sc.scope(), p, sc.Gate); err != nil {
		return nil, err
	}
	if err := s.admitPlan(ctx, t, p); err != nil {
		return nil, err
	}
	return s.runPlanned(ctx, t, sc, program, p)
}

// runPlanned executes a plan that passed review gating and admission.
func (s *Service) runPlanned(ctx context.Context, t *tenant.Tenant, sc RunScope, program string, p *plan.Plan) (*RunOutcome, error) {
	sb := s.sandboxFor(t)
	origins := s.registry.Origins(sc.Execute.Entries)
	secrets, err := s.principalSecrets(ctx, t, p, s.registry.secretsFor(t, sc.Execute.Entries))
	if err != nil {
		return nil, err
	}
	env := &executor.Env{
		Engine:     s.tracer.Engine(sb),
		OnStep:     s.tracer.StepHook(),
		SecretsFor: secrets,
		Origins:    origins,
		Hooks:      s.vendors.hooks(t, t.Limits.Apply(s.limits), sc.Execute.Entries, origins, secrets),
		Budget:     t.Limits.RunBudget(),
		Identity:   s.registry.Identity,
		Dates:      s.registry.Dates,
		ResolvePage: func(handle string) (*executor.Continuation, error) {
			return s.resolvePage(ctx, t, sc, handle)
		},
	}
	res, err := s.exec.Run(ctx, p, env)
	if err != nil {
		s.auditRun(ctx, t, sc, program, p, nil, "", err, secrets)
		return &RunOutcome{Plan: p}, err
	}
	n, err := s.store.NextSeq(ctx, t.ID, sc.scope(), "run")
	if err != nil {
		return nil, err
	}
	run := session.Run{
		Tenant: t.ID, Principal: t.Principal, LogicalID: sc.LogicalID, PromptHash: sc.Execute.PromptHash, SessionID: sc.Execute.ID,
		RunID: uuid.NewString(), N: n, Program: program, Created: time.Now().UTC(),
	}
	out := &RunOutcome{Plan: p, Steps: res.Steps}
	out.ShortURI = fmt.Sprintf("plasm://session/%s/r/%d", sc.Ref, n)
	out.CanonicalURI = fmt.Sprintf("plasm://execute/%s/%s/run/%s", sc.Execute.PromptHash, sc.Execute.ID, run.RunID)
	for _, r := range res.Roots {
		rr := session.RunRoot{Label: r.Label, EntryID: r.EntryID, Entity: r.Entity, Table: r.Table}
		if r.Next != nil {
			pn, err := s.store.NextSeq(ctx, t.ID, sc.scope(), "page")
			if err != nil {
				return nil, err
			}
			if err := s.store.PutPage(ctx, session.Page{Tenant: t.ID, Scope: sc.scope(), N: pn, Continuation: *r.Next}); err != nil {
				return nil, err
			}
			rr.PageHandle = fmt.Sprintf("%s_pg%d", sc.Ref, pn)
		}
		run.Roots = append(run.Roots, rr)
		out.Roots = append(out.Roots, results.Root{Label: r.Label, Table: r.Table, PageHandle: rr.PageHandle, ArtifactURI: out.ShortURI})
	}
	if err := s.store.PutRun(ctx, run); err != nil {
		return nil, err
	}
	s.auditRun(ctx, t, sc, program, p, res, run.RunID, nil, secrets)
	s.publishMutations(t, run.RunID, res.Mutations)
	out.Run = run
	return out, nil
}

// resolvePage finds the continuation behind a handle such as s0_pg3. A
// handle minted for another ref (or tenant) is rejected as not found.
func (s *Service) resolvePage(ctx context.Context, t *tenant.Tenant, sc RunScope, handle string) (*executor.Continuation, error) {
	ref, num, ok := strings.Cut(handle, "_pg")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n <= 0 {
		return nil, &problem.Problem{Type: problem.Base + "bad-handle", Title: "Bad Request", Status: 400,
			Detail: fmt.Sprintf("%q is not a paging handle", handle), Hint: "paging handles look like s0_pg1 and come from earlier results"}
	}
	if ref != sc.Ref && !s.foreignPageRef(ctx, t, sc, ref) {
		return nil, &problem.Problem{Type: problem.Base + "bad-handle", Title: "Bad Request", Status: 400,
			Detail: fmt.Sprintf("paging handle %s belongs to logical session %s, not %s", handle, ref, sc.Ref),
			Hint:   "use handles from this logical_session_ref's own results"}
	}
	pg, err := s.store.GetPage(ctx, t.ID, sc.scope(), n)
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return nil, problem.NotFound("paging handle %s is unknown in this session", handle)
		}
		return nil, err
	}
	c := pg.Continuation
	return &c, nil
}

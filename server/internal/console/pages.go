package console

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	runs := c.jr.Runs(v.scope(), nil)
	if len(runs) > 20 {
		runs = runs[:20]
	}
	faults := c.jr.Faults(v.scope())
	if len(faults) > 10 {
		faults = faults[:10]
	}
	c.render(w, r, http.StatusOK, "home", "Live activity", map[string]any{"Runs": runs, "Faults": faults})
}

// catalogFor returns a catalog the viewer may see.
func (c *Console) catalogFor(v Viewer, entry string) (*catalog.Catalog, bool) {
	for _, cat := range c.be.Catalogs(v.scope()) {
		if cat.EntryID == entry || slices.Contains(cat.RegistryAliases, entry) {
			return cat, true
		}
	}
	return nil, false
}

type catalogRow struct {
	Cat                       *catalog.Catalog
	Entities, Caps, Relations int
}

func (c *Console) catalogs(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	q := r.URL.Query().Get("q")
	var rows []catalogRow
	for _, cat := range c.be.Catalogs(v.scope()) {
		if !contains(q, cat.EntryID, cat.Description, strings.Join(cat.RegistryAliases, " ")) {
			continue
		}
		rel := 0
		for _, e := range cat.Entities {
			rel += len(e.Relations)
		}
		rows = append(rows, catalogRow{Cat: cat, Entities: len(cat.Entities), Caps: len(cat.Capabilities), Relations: rel})
	}
	items, pg := paginate(r, rows)
	var refused map[string]string
	if v.AllTenants() {
		refused = c.be.Refused()
	}
	c.render(w, r, http.StatusOK, "catalogs", "Catalogs", map[string]any{"Rows": items, "Pager": pg, "Q": q, "Refused": refused})
}

// check is one line of the catalog check.
type check struct {
	OK   bool
	Text string
}

// catalogChecks are what `plasmd catalog check` reports for a loaded
// catalog, plus the advisory findings an operator acts on.
func catalogChecks(cat *catalog.Catalog) []check {
	out := []check{{OK: true, Text: fmt.Sprintf("ok  %s  %d entities, %d capabilities  sha256:%s", cat.EntryID, len(cat.Entities), len(cat.Capabilities), cat.Digest)}}
	for _, name := range sortedKeys(cat.Entities) {
		e := cat.Entities[name]
		if e.Abstract {
			continue
		}
		readable := false
		for _, cp := range cat.Capabilities {
			if cp.Entity == name && (cp.Kind == catalog.KindGet || cp.Kind == catalog.KindQuery || cp.Kind == catalog.KindSearch) {
				readable = true
				break
			}
		}
		if !readable {
			out = append(out, check{Text: fmt.Sprintf("entity %s has no get, query or search: agents can only reach it through relations", name)})
		}
	}
	for _, name := range sortedKeys(cat.Capabilities) {
		if _, ok := cat.Mappings[name]; !ok && cat.Module == nil {
			out = append(out, check{Text: fmt.Sprintf("capability %s has no mapping", name)})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// relationGraph draws a catalog's entities and relations.
func relationGraph(cat *catalog.Catalog) template.HTML {
	names := sortedKeys(cat.Entities)
	var nodes []graphNode
	var edges []graphEdge
	for _, n := range names {
		e := cat.Entities[n]
		sub := fmt.Sprintf("%d fields", len(e.Fields))
		if e.Abstract {
			sub = "abstract"
		}
		nodes = append(nodes, graphNode{ID: n, Label: n, Sub: sub, Href: "#entity-" + n})
		for _, rn := range e.RelOrder {
			rel := e.Relations[rn]
			label := rn
			if rel.Cardinality == "many" {
				label += " []"
			}
			edges = append(edges, graphEdge{From: n, To: rel.Target, Label: label})
		}
	}
	return drawGraph(cat.EntryID+" entities and relations", nodes, circleLayout(len(nodes)), edges, 28)
}

type capRow struct {
	Cap    *catalog.Capability
	Params []string
}

func (c *Console) catalog(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	cat, ok := c.catalogFor(v, r.PathValue("entry"))
	if !ok {
		c.notFound(w, r, "no catalog "+r.PathValue("entry")+" in this registry")
		return
	}
	q := r.URL.Query().Get("q")
	var caps []capRow
	for _, n := range sortedKeys(cat.Capabilities) {
		cp := cat.Capabilities[n]
		if !contains(q, cp.Name, cp.Kind, cp.Entity, cp.Description) {
			continue
		}
		var ps []string
		for _, p := range cp.Parameters {
			s := p.Name
			if p.Required {
				s += "*"
			}
			ps = append(ps, s)
		}
		caps = append(caps, capRow{Cap: cp, Params: ps})
	}
	capPage, pg := paginate(r, caps)
	var ents []*catalog.Entity
	for _, n := range sortedKeys(cat.Entities) {
		ents = append(ents, cat.Entities[n])
	}
	seeds := r.URL.Query()["seed"]
	intent := r.URL.Query().Get("intent")
	preview, perr := c.teach(v, cat, seeds, intent)
	c.render(w, r, http.StatusOK, "catalog", cat.EntryID, map[string]any{
		"Cat": cat, "Entities": ents, "Caps": capPage, "Pager": pg, "Q": q,
		"Graph": relationGraph(cat), "Checks": catalogChecks(cat),
		"Seeds": seeds, "Intent": intent, "Preview": preview, "PreviewErr": perr,
	})
}

// maxSeeds bounds a preview's seed set, as the API bounds plasm_context's.
const maxSeeds = 64

// teach renders what the teaching table would say for a seed set of one
// catalog, with a fresh symbol map (the first wave of a new session).
func (c *Console) teach(v Viewer, cat *catalog.Catalog, seeds []string, intent string) (string, string) {
	if len(seeds) == 0 {
		return "", ""
	}
	if len(seeds) > maxSeeds {
		return "", fmt.Sprintf("at most %d seed entities per preview", maxSeeds)
	}
	cats := map[string]*catalog.Catalog{}
	for _, x := range c.be.Catalogs(v.scope()) {
		cats[x.EntryID] = x
	}
	req := teaching.Request{Catalogs: cats, Intent: intent}
	for _, s := range seeds {
		req.Seeds = append(req.Seeds, teaching.Seed{EntryID: cat.EntryID, Entity: s})
	}
	var m symbol.Map
	wave, err := teaching.Expose(&m, teaching.Exposure{}, req)
	if err != nil {
		return "", err.Error()
	}
	return teaching.RenderFirst(&m, wave), ""
}

func (c *Console) catalogSVG(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	cat, ok := c.catalogFor(v, r.PathValue("entry"))
	if !ok {
		c.notFound(w, r, "no catalog "+r.PathValue("entry")+" in this registry")
		return
	}
	writeSVG(w, relationGraph(cat))
}

func writeSVG(w http.ResponseWriter, svg template.HTML) {
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + string(svg)))
}

// sessionRow is one execute session seen through its runs.
type sessionRow struct {
	Tenant, LogicalID, Intent, PromptHash, SessionID string
	Runs, Failed                                     int
	Last                                             *activity.Run
}

// sessionRows groups the viewer's journal runs by execute session, newest
// activity first.
func (c *Console) sessionRows(v Viewer) []*sessionRow {
	var out []*sessionRow
	by := map[string]*sessionRow{}
	for _, run := range c.jr.Runs(v.scope(), nil) {
		k := run.Tenant + "\x00" + run.SessionID
		s, ok := by[k]
		if !ok {
			s = &sessionRow{Tenant: run.Tenant, LogicalID: run.LogicalID, Intent: run.Intent, PromptHash: run.PromptHash, SessionID: run.SessionID, Last: run}
			by[k] = s
			out = append(out, s)
		}
		s.Runs++
		if run.Failed() {
			s.Failed++
		}
	}
	// Sessions opened but not run yet are listed too.
	for _, o := range c.jr.Sessions(v.scope()) {
		k := o.Tenant + "\x00" + o.SessionID
		if _, ok := by[k]; ok {
			continue
		}
		s := &sessionRow{Tenant: o.Tenant, LogicalID: o.LogicalID, Intent: o.Intent, PromptHash: o.PromptHash, SessionID: o.SessionID}
		by[k] = s
		out = append(out, s)
	}
	return out
}

func (c *Console) sessions(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	q := r.URL.Query().Get("q")
	var rows []*sessionRow
	for _, s := range c.sessionRows(v) {
		if contains(q, s.Intent, s.SessionID, s.LogicalID, s.Tenant) {
			rows = append(rows, s)
		}
	}
	// Group by intent: logical sessions of one intent sit together.
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Intent < rows[j].Intent })
	items, pg := paginate(r, rows)
	c.render(w, r, http.StatusOK, "sessions", "Sessions", map[string]any{"Rows": items, "Pager": pg, "Q": q})
}

// wave is one run of consecutive exposed entities of one catalog, in
// symbol order (the exposure does not keep wave boundaries; the session's
// Prompt, shown beside it, has each wave's text).
type wave struct {
	Entry    string
	Entities []teaching.ExposedEntity
}

func waves(ex session.Execute) []wave {
	var out []wave
	for _, e := range ex.Exposure.Entities {
		if len(out) == 0 || out[len(out)-1].Entry != e.EntryID {
			out = append(out, wave{Entry: e.EntryID})
		}
		out[len(out)-1].Entities = append(out[len(out)-1].Entities, e)
	}
	return out
}

func (c *Console) session(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	ph, sid := r.PathValue("ph"), r.PathValue("sid")
	runs := c.jr.Runs(v.scope(), func(run *activity.Run) bool { return run.PromptHash == ph && run.SessionID == sid })
	tenant := v.Tenant
	if tenant == "" && len(runs) > 0 {
		tenant = runs[0].Tenant
	}
	if tenant == "" {
		c.notFound(w, r, "no session "+sid)
		return
	}
	ex, err := c.be.Execute(r.Context(), tenant, ph, sid)
	state := "live"
	switch {
	case errors.Is(err, session.ErrExpired):
		state = "expired"
	case err != nil && len(runs) == 0:
		c.notFound(w, r, "no session "+sid)
		return
	case err != nil:
		state = "gone"
	}
	var intent string
	if ex.LogicalID != "" {
		if l, err := c.be.Logical(r.Context(), tenant, ex.LogicalID); err == nil {
			intent = l.Intent
		}
	}
	if intent == "" && len(runs) > 0 {
		intent = runs[0].Intent
	}
	slices.Reverse(runs) // in order
	c.render(w, r, http.StatusOK, "session", "Session "+sid, map[string]any{
		"Tenant": tenant, "PH": ph, "SID": sid, "State": state, "Ex": ex, "Intent": intent,
		"Waves": waves(ex), "Runs": runs,
	})
}

func (c *Console) runs(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	q := r.URL.Query().Get("q")
	status := r.URL.Query().Get("status")
	runs := c.jr.Runs(v.scope(), func(run *activity.Run) bool {
		if status == "failed" && !run.Failed() || status == "ok" && run.Failed() {
			return false
		}
		return contains(q, run.Program, run.Intent, run.ID, run.Tenant)
	})
	items, pg := paginate(r, runs)
	c.render(w, r, http.StatusOK, "runs", "Runs", map[string]any{"Runs": items, "Pager": pg, "Q": q, "Status": status})
}

// planGraph draws a plan's DAG in layers by dependency depth.
func planGraph(p *plan.Plan, failedNode int) template.HTML {
	depth := make([]int, len(p.Nodes))
	order := p.Order
	if len(order) != len(p.Nodes) {
		order = make([]int, len(p.Nodes))
		for i := range order {
			order[i] = i
		}
	}
	for _, id := range order {
		for _, d := range nodeDeps(&p.Nodes[id]) {
			if d >= 0 && d < len(depth) && d != id {
				depth[id] = max(depth[id], depth[d]+1)
			}
		}
	}
	var nodes []graphNode
	var cols []int
	var edges []graphEdge
	for _, id := range order {
		n := &p.Nodes[id]
		label := fmt.Sprintf("n%d %s", n.ID, n.Op)
		sub := n.Capability
		if n.Hop != nil {
			sub = "." + n.Hop.Relation + " → " + n.Hop.Target
		}
		if sub == "" {
			sub = n.Entity
		}
		cls := n.Effect
		if n.ID == failedNode {
			cls += " failed"
		}
		nodes = append(nodes, graphNode{ID: fmt.Sprint(n.ID), Label: label, Sub: sub, Href: fmt.Sprintf("#step-%d", n.ID), Class: cls})
		cols = append(cols, depth[id])
		for _, d := range nodeDeps(n) {
			edges = append(edges, graphEdge{From: fmt.Sprint(d), To: fmt.Sprint(n.ID)})
		}
	}
	return drawGraph("plan", nodes, columnLayout(cols), edges, 0)
}

// nodeDeps are the nodes a node waits for, each once.
func nodeDeps(n *plan.Node) []int {
	var ds []int
	if n.Input >= 0 {
		ds = append(ds, n.Input)
	}
	ds = append(ds, n.Deps...)
	for _, a := range n.ArgRefs {
		ds = append(ds, a.Node)
	}
	slices.Sort(ds)
	return slices.Compact(ds)
}

// stepRow joins a plan node with what the executor reported for it.
type stepRow struct {
	Node               *plan.Node
	Ran                bool
	Calls, Pages, Rows int
	Duration           time.Duration
}

func (c *Console) run(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	run, ok := c.jr.Run(v.scope(), r.PathValue("id"))
	if !ok {
		c.notFound(w, r, "no run "+r.PathValue("id"))
		return
	}
	var steps []stepRow
	var graph template.HTML
	if run.Plan != nil {
		failed := -1
		if run.Err != nil {
			failed = failedNode(run)
		}
		graph = planGraph(run.Plan, failed)
		for _, id := range run.Plan.Order {
			row := stepRow{Node: &run.Plan.Nodes[id]}
			for _, s := range run.Steps {
				if s.Node == id {
					row.Ran = true
					row.Calls += s.Calls
					row.Pages += s.Pages
					row.Rows += s.Rows
					row.Duration += s.Duration
				}
			}
			steps = append(steps, row)
		}
	}
	c.render(w, r, http.StatusOK, "run", "Run "+run.ID, map[string]any{"Run": run, "Graph": graph, "Steps": steps})
}

// failedNode is the plan node a run's error names ("step N (…)"), or -1.
func failedNode(run *activity.Run) int {
	var n int
	if _, err := fmt.Sscanf(run.Err.Detail, "step %d", &n); err == nil {
		return n
	}
	return -1
}

func (c *Console) runSVG(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	run, ok := c.jr.Run(v.scope(), r.PathValue("id"))
	if !ok || run.Plan == nil {
		c.notFound(w, r, "no run plan "+r.PathValue("id"))
		return
	}
	writeSVG(w, planGraph(run.Plan, -1))
}

func (c *Console) tenants(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerOf(r)
	q := r.URL.Query().Get("q")
	var rows []TenantInfo
	for _, t := range c.be.Tenants(v.scope()) {
		if contains(q, t.ID, strings.Join(t.Catalogs, " ")) {
			rows = append(rows, t)
		}
	}
	items, pg := paginate(r, rows)
	faults := c.jr.Faults(v.scope())
	if len(faults) > 50 {
		faults = faults[:50]
	}
	c.render(w, r, http.StatusOK, "tenants", "Tenants and limits", map[string]any{"Rows": items, "Pager": pg, "Q": q, "Faults": faults})
}

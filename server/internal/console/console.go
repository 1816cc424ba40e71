// Package console is plasmd's operator web console at /ui: server-rendered
// pages (html/template) over the catalogs, sessions, runs, tenants and live
// activity, with graphs and plan DAGs drawn as SVG on the server. Assets are
// embedded; pages carry a strict Content-Security-Policy (no inline script
// or style), and the only script is a small progressive enhancement that
// streams live activity over SSE.
//
// The console never decides who is asking: the server authenticates each
// request and attaches a Viewer (WithViewer). A tenant viewer sees only its
// own tenant's things, and anything else reads as "not found"; the
// all-tenant operator view is granted by the server to loopback operators
// only.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/sandbox"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/session"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// CSP is the Content-Security-Policy of every console response: scripts,
// styles and connections from the console's own origin only, no inline
// code, no framing, forms posting only to the console itself.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Viewer is who is looking. Tenant "" with Operator set is the all-tenant
// operator view.
type Viewer struct {
	Tenant   string
	Operator bool
}

// AllTenants reports whether the viewer sees every tenant.
func (v Viewer) AllTenants() bool { return v.Tenant == "" && v.Operator }

// scope is the tenant filter for the journal ("" = all).
func (v Viewer) scope() string { return v.Tenant }

type viewerKey struct{}

// WithViewer attaches the authenticated viewer to a request context.
func WithViewer(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

func viewerOf(r *http.Request) (Viewer, bool) {
	v, ok := r.Context().Value(viewerKey{}).(Viewer)
	return v, ok
}

// TenantInfo is one tenant's row on the tenants page.
type TenantInfo struct {
	ID       string
	Catalogs []string // allowed catalogs; empty means all
	Limits   sandbox.LimitsView
	Pool     sandbox.TenantStats
	Active   bool // the tenant has a sandbox (made its first call)
}

// Backend is what the console reads from the server.
type Backend interface {
	// Catalogs returns the catalogs a tenant may see ("" = all), sorted.
	Catalogs(tenant string) []*catalog.Catalog
	// Refused lists catalogs left out at load, as entry id → error.
	Refused() map[string]string
	// Execute and Logical read session state of a tenant.
	Execute(ctx context.Context, tenant, promptHash, id string) (session.Execute, error)
	Logical(ctx context.Context, tenant, id string) (session.Logical, error)
	// Tenants describes tenants ("" = all).
	Tenants(tenant string) []TenantInfo
	// Authenticate resolves a bearer token to a tenant id (console login).
	Authenticate(token string) (string, bool)
}

// CookieName holds the console login (the tenant's bearer token).
const CookieName = "plasmd_console"

// Console serves /ui.
type Console struct {
	be    Backend
	jr    *activity.Journal
	pages map[string]*template.Template
	mux   *http.ServeMux
	// Heartbeat is the SSE keep-alive interval.
	Heartbeat time.Duration
}

// ErrTemplate wraps a template that fails to parse (a build defect).
var ErrTemplate = errors.New("console template")

// New returns a console over a backend and journal.
func New(be Backend, jr *activity.Journal) (*Console, error) {
	c := &Console{be: be, jr: jr, pages: map[string]*template.Template{}, Heartbeat: 15 * time.Second}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTemplate, err)
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrTemplate, n, err)
		}
		c.pages[base] = t
	}
	static, _ := fs.Sub(staticFS, "static")
	m := http.NewServeMux()
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /ui/login", c.loginForm)
	m.HandleFunc("POST /ui/login", c.login)
	m.HandleFunc("POST /ui/logout", c.logout)
	m.HandleFunc("GET /ui/{$}", c.home)
	m.HandleFunc("GET /ui/events", c.events)
	m.HandleFunc("GET /ui/catalogs", c.catalogs)
	m.HandleFunc("GET /ui/catalogs/{entry}", c.catalog)
	m.HandleFunc("GET /ui/catalogs/{entry}/graph.svg", c.catalogSVG)
	m.HandleFunc("GET /ui/sessions", c.sessions)
	m.HandleFunc("GET /ui/sessions/{ph}/{sid}", c.session)
	m.HandleFunc("GET /ui/runs", c.runs)
	m.HandleFunc("GET /ui/runs/{id}", c.run)
	m.HandleFunc("GET /ui/runs/{id}/plan.svg", c.runSVG)
	m.HandleFunc("GET /ui/tenants", c.tenants)
	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		c.notFound(w, r, "no such console page")
	})
	c.mux = m
	return c, nil
}

// ServeHTTP serves a request under /ui. Requests without a viewer (not
// logged in) reach only the login page and the static assets.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if _, ok := viewerOf(r); !ok && !public(r.URL.Path) {
		if r.Method == http.MethodGet && r.URL.Path != "/ui/events" {
			http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	c.mux.ServeHTTP(w, r)
}

// public paths need no viewer.
func public(p string) bool {
	return strings.HasPrefix(p, "/ui/static/") || p == "/ui/login" || p == "/ui/logout"
}

// page is what every template gets.
type page struct {
	Title  string
	Nav    string
	Viewer Viewer
	Data   any
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	v, _ := viewerOf(r)
	t := c.pages[name]
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", page{Title: title, Nav: name, Viewer: v, Data: data}); err != nil {
		http.Error(w, "console template error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// notFound answers 404 with the same page whether the thing does not exist
// or belongs to another tenant, so the console is no existence oracle.
func (c *Console) notFound(w http.ResponseWriter, r *http.Request, what string) {
	c.render(w, r, http.StatusNotFound, "notfound", "Not found", what)
}

// pager is a page of a server-side filtered table.
type pager struct {
	Page, Pages, Total int
	Prev, Next         string // links, "" at the ends
}

const perPage = 25

// paginate cuts items to the requested ?page and builds the links,
// keeping the other query parameters (filters).
func paginate[T any](r *http.Request, items []T) ([]T, pager) {
	n := len(items)
	pages := max(1, (n+perPage-1)/perPage)
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	p = min(max(p, 1), pages)
	link := func(to int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(to))
		return r.URL.Path + "?" + q.Encode()
	}
	pg := pager{Page: p, Pages: pages, Total: n}
	if p > 1 {
		pg.Prev = link(p - 1)
	}
	if p < pages {
		pg.Next = link(p + 1)
	}
	lo := (p - 1) * perPage
	return items[lo:min(lo+perPage, n)], pg
}

// contains is a case-insensitive substring filter; an empty needle keeps all.
func contains(needle string, hay ...string) bool {
	needle = strings.ToLower(strings.TrimSpace(needle))
	if needle == "" {
		return true
	}
	for _, h := range hay {
		if strings.Contains(strings.ToLower(h), needle) {
			return true
		}
	}
	return false
}

var funcs = template.FuncMap{
	"ms":   msText,
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"cell": func(v any) string {
		if v == nil {
			return "∅"
		}
		return fmt.Sprint(v)
	},
	"firstLine": firstLine,
	"mib":       func(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) + " MiB" },
	"join":      strings.Join,
	"inc":       func(i int) int { return i + 1 },
	"has":       slices.Contains[[]string],
}

// msText shows a duration in milliseconds with one decimal.
func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}

// firstLine is a program's first line, clipped for tables.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return clip(line, 80)
}

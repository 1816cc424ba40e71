package refbackend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Pagination styles the REST side serves, one URL prefix each.
const (
	StyleOffset  = "offset"  // ?offset=&limit=, {items, has_more}
	StylePage    = "page"    // ?page=N (from 1), bare array, json-server Link header
	StyleCursor  = "cursor"  // ?cursor=, {data, next_cursor}
	StyleLink    = "link"    // bare array, Link rel="next" only while more
	StyleNextURL = "nexturl" // {results, next: absolute URL or null}
	StyleSparse  = "sparse"  // ?page=N (from 1), {data}, uneven pages, an empty page past the end
	StyleGraphQL = "graphql" // POST /graphql, Relay connections
)

// Styles lists every style, REST first.
var Styles = []string{StyleOffset, StylePage, StyleCursor, StyleLink, StyleNextURL, StyleSparse, StyleGraphQL}

// Server serves one data set. It is safe for concurrent use.
type Server struct {
	data     *Data
	pageSize int
	requests atomic.Int64

	mu     sync.Mutex
	rows   map[string][]map[string]any // collection → rows in id order
	faults map[string]Fault            // collection → forced answer
}

// Fault is a forced answer for every request to one collection, to test
// how backend outcomes surface.
type Fault struct {
	Status     int
	RetryAfter string // Retry-After header, if any
	Body       string // JSON body
}

// SetFault makes every request to coll answer f; a zero Fault clears it.
func (s *Server) SetFault(coll string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Status == 0 {
		delete(s.faults, coll)
		return
	}
	s.faults[coll] = f
}

// list returns a collection's rows (shared; callers must not modify them).
func (s *Server) list(coll string) ([]map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, ok := s.rows[coll]
	return rows, ok
}

// New serves d with pageSize rows per page (at least 1).
func New(d *Data, pageSize int) *Server {
	s := &Server{data: d, pageSize: max(pageSize, 1), rows: map[string][]map[string]any{}, faults: map[string]Fault{}}
	s.rows["authors"] = asRows(d.Authors)
	s.rows["posts"] = asRows(d.Posts)
	s.rows["comments"] = asRows(d.Comments)
	return s
}

// Requests is how many requests the server answered.
func (s *Server) Requests() int64 { return s.requests.Load() }

// PageSize is the server's page size.
func (s *Server) PageSize() int { return s.pageSize }

func asRows[T any](xs []T) []map[string]any {
	b, _ := json.Marshal(xs)
	var out []map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// ServeHTTP routes /{style}/{collection}[/{id}] and /graphql.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) == 1 && parts[0] == StyleGraphQL {
		s.graphql(w, r)
		return
	}
	if len(parts) < 2 || len(parts) > 3 {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "no such route"})
		return
	}
	style, coll := parts[0], parts[1]
	s.mu.Lock()
	f, faulty := s.faults[coll]
	s.mu.Unlock()
	if faulty {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(f.Body))
		return
	}
	all, ok := s.list(coll)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "no such collection " + coll})
		return
	}
	if r.Method == http.MethodDelete && len(parts) == 3 {
		s.remove(w, coll, parts[2])
		return
	}
	if r.Method == http.MethodPost && len(parts) == 2 {
		s.create(w, r, coll)
		return
	}
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "method not allowed"})
		return
	}
	if len(parts) == 3 {
		for _, row := range all {
			if fmt.Sprint(row["id"]) == parts[2] {
				writeJSON(w, http.StatusOK, row)
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("%s %s not found", coll, parts[2])})
		return
	}
	s.page(w, r, style, filter(all, r.URL.Query()))
}

// page answers one page of list in the given pagination style.
func (s *Server) page(w http.ResponseWriter, r *http.Request, style string, list []map[string]any) {
	q := r.URL.Query()
	switch style {
	case StyleOffset:
		// Like most APIs, the server caps the page size it was asked for.
		off, lim := atoi(q.Get("offset"), 0), min(atoi(q.Get("limit"), s.pageSize), s.pageSize)
		items := window(list, off, lim)
		writeJSON(w, http.StatusOK, map[string]any{"items": items, "has_more": off+len(items) < len(list)})
	case StylePage:
		pg := max(atoi(q.Get("page"), 1), 1)
		last := max((len(list)+s.pageSize-1)/s.pageSize, 1)
		links := []string{s.link(r, "page", 1, "first"), s.link(r, "page", last, "last")}
		if pg > 1 {
			links = append(links, s.link(r, "page", pg-1, "prev"))
		}
		if pg < last {
			links = append(links, s.link(r, "page", pg+1, "next"))
		}
		w.Header().Set("Link", strings.Join(links, ", "))
		writeJSON(w, http.StatusOK, window(list, (pg-1)*s.pageSize, s.pageSize))
	case StyleCursor:
		off := 0
		if c := q.Get("cursor"); c != "" {
			off = atoi(strings.TrimPrefix(c, "c"), -1)
			if off < 0 || !strings.HasPrefix(c, "c") {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "bad cursor"})
				return
			}
		}
		var next any
		if off+s.pageSize < len(list) {
			next = "c" + strconv.Itoa(off+s.pageSize)
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": window(list, off, s.pageSize), "next_cursor": next})
	case StyleLink:
		off := atoi(q.Get("offset"), 0)
		if off+s.pageSize < len(list) {
			w.Header().Set("Link", s.link(r, "offset", off+s.pageSize, "next"))
		}
		writeJSON(w, http.StatusOK, window(list, off, s.pageSize))
	case StyleNextURL:
		off := atoi(q.Get("offset"), 0)
		var next any
		if off+s.pageSize < len(list) {
			next = "http://" + r.Host + withParam(r, "offset", off+s.pageSize)
		}
		writeJSON(w, http.StatusOK, map[string]any{"results": window(list, off, s.pageSize), "next": next})
	case StyleSparse:
		// A backend that drops rows the caller may not see after choosing
		// a page: pages are uneven (see SparsePage), only an empty page
		// says the list ended, and the Link header names no other page,
		// though its text holds "last" and "first".
		pg := max(atoi(q.Get("page"), 1), 1)
		off, size := SparsePage(pg, s.pageSize)
		w.Header().Set("Link", fmt.Sprintf(`<http://%s%s?sort=last_modified>; rel="self", <http://%s/docs/first-steps>; rel="help"`, r.Host, r.URL.Path, r.Host))
		writeJSON(w, http.StatusOK, map[string]any{"data": window(list, off, size)})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "no such style " + style})
	}

}

// SparsePage is where page pg (from 1) of the sparse style starts and how
// many rows it holds: odd pages pageSize, even pages half as many (at
// least 1), so every other page is short in the middle of a list.
func SparsePage(pg, pageSize int) (off, size int) {
	full, half := pageSize, max(pageSize/2, 1)
	off = (pg-1)/2*(full+half) + (pg-1)%2*full
	if pg%2 == 0 {
		return off, half
	}
	return off, full
}

// create appends the JSON object in the body as a new row with the next id,
// storing whatever it is given (as a lenient backend would).
func (s *Server) create(w http.ResponseWriter, r *http.Request, coll string) {
	var row map[string]any
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&row); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "body is not a JSON object"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := s.rows[coll]
	row["id"] = float64(len(rows) + 1000)
	s.rows[coll] = append(append([]map[string]any(nil), rows...), row)
	writeJSON(w, http.StatusCreated, row)
}

// remove deletes one row: 204 without a body, or 404.
func (s *Server) remove(w http.ResponseWriter, coll, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := s.rows[coll]
	for i, row := range rows {
		if fmt.Sprint(row["id"]) == id {
			// A new slice: readers may hold the old one.
			s.rows[coll] = append(append([]map[string]any(nil), rows[:i]...), rows[i+1:]...)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("%s %s not found", coll, id)})
}

// link is one RFC 8288 link to this request's URL with param set to n.
func (s *Server) link(r *http.Request, param string, n int, rel string) string {
	return fmt.Sprintf(`<http://%s%s>; rel="%s"`, r.Host, withParam(r, param, n), rel)
}

func withParam(r *http.Request, param string, n int) string {
	q := r.URL.Query()
	q.Set(param, strconv.Itoa(n))
	return r.URL.Path + "?" + q.Encode()
}

// filter keeps rows whose fields equal every non-paging query parameter.
func filter(rows []map[string]any, q map[string][]string) []map[string]any {
	out := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		keep := true
		for k, vs := range q {
			switch k {
			case "offset", "limit", "page", "cursor":
				continue
			case "q": // search: every word in the title
				for _, w := range strings.Fields(strings.ToLower(strings.Join(vs, " "))) {
					if !strings.Contains(strings.ToLower(fmt.Sprint(row["title"])), w) {
						keep = false
					}
				}
				continue
			}
			if len(vs) == 0 || fmt.Sprint(row[k]) != vs[0] {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, row)
		}
	}
	return out
}

func window(rows []map[string]any, off, n int) []map[string]any {
	if off < 0 || off >= len(rows) || n <= 0 {
		return []map[string]any{}
	}
	return rows[off:min(off+n, len(rows))]
}

func atoi(s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

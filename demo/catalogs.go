package demo

import (
	"embed"
	"strings"
)

// Catalogs holds the demo catalogs: catalogs/tracker/{domain,mappings}.yaml
// and catalogs/kanban/{domain,mappings}.yaml. Use fs.Sub(Catalogs, "catalogs")
// to get a tree whose top-level directories are the entry ids.
//
//go:embed catalogs
var Catalogs embed.FS

// Entry ids of the demo catalogs (their directory names under catalogs/).
const (
	TrackerEntryID = "tracker"
	KanbanEntryID  = "kanban"
	LedgerEntryID  = "ledger"
)

// PlaceholderOrigin is the origin every demo catalog's http_backend uses.
// Port 0 can never be dialled, so an un-rebased catalog fails fast instead
// of reaching some other local service.
const PlaceholderOrigin = "http://127.0.0.1:0"

// Rebase replaces PlaceholderOrigin at the start of httpBackend with baseURL
// (the running Server's URL) and returns the result. Any other value is
// returned unchanged, so a catalog already pointed elsewhere is left alone.
func Rebase(httpBackend, baseURL string) string {
	rest, ok := strings.CutPrefix(httpBackend, PlaceholderOrigin)
	if !ok || (rest != "" && rest[0] != '/' && rest[0] != '?') {
		return httpBackend
	}
	return strings.TrimRight(baseURL, "/") + rest
}

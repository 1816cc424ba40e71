package abi

import (
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
)

// LoadCatalogRequest installs (or replaces) a catalog in the guest instance.
type LoadCatalogRequest struct {
	Catalog *catalog.Catalog `json:"catalog"`
}

// LoadCatalogResponse acknowledges a load.
type LoadCatalogResponse struct {
	EntryID string `json:"entry_id"`
	Digest  string `json:"digest"`
}

// PlanRequest asks the engine to parse, expand, check and plan a program.
type PlanRequest struct {
	Program string `json:"program"`
	// Symbols is the session's symbol map; programs may use its symbols and
	// always wire names. Nil means wire names only.
	Symbols *symbol.Map `json:"symbols,omitempty"`
	// SymbolsDigest names the symbol map carried in the ExportPlan frame's
	// payload (hex sha256 prefix of its JSON). Set by the host.
	SymbolsDigest string `json:"symbols_digest,omitempty"`
	// Entries are the catalogs the program may use (already loaded), in the
	// session's order; a bare entity name resolves in the first entry that has
	// it when it is unambiguous.
	Entries []string `json:"entries"`
	// PlanWire, when not 0, is the version of the plan's binary wire form
	// the host reads (plan.WireVersion): an engine that writes that
	// version answers in it, any other answers JSON. Hosts set it only for
	// engines that export ExportPlanWire.
	PlanWire int `json:"plan_wire,omitempty"`
}

// CompileRequest asks for the wire request of one capability call.
type CompileRequest struct {
	EntryID    string         `json:"entry_id"`
	Capability string         `json:"capability"`
	Vars       map[string]any `json:"vars,omitempty"`
	// Page is the pagination state for a continuation; nil for the first page.
	Page map[string]any `json:"page,omitempty"`
}

// AuthDirective tells the host how to inject credentials. The guest names
// secrets; only the host resolves them.
type AuthDirective struct {
	Scheme string `json:"scheme"` // bearer_token api_key_header api_key_query oauth2_client_credentials
	Header string `json:"header,omitempty"`
	Param  string `json:"param,omitempty"`
	Secret string `json:"secret"`
	// For oauth2_client_credentials: the host exchanges the client id and
	// secret (Secret) at TokenURL, which must be a declared origin, and
	// sends the access token as a bearer. The guest never sees the token.
	TokenURL string   `json:"token_url,omitempty"`
	ClientID string   `json:"client_id,omitempty"` // secret name
	Scopes   []string `json:"scopes,omitempty"`
}

// CompiledRequest is a backend request for the host to send.
type CompiledRequest struct {
	Method  string         `json:"method"`
	URL     string         `json:"url"`
	Headers [][2]string    `json:"headers,omitempty"`
	Body    string         `json:"body,omitempty"`
	Auth    *AuthDirective `json:"auth,omitempty"`
	// Page is the pagination state this request used (counters filled in).
	Page map[string]any `json:"page,omitempty"`
}

// DecodeRequest is the header of an ExportDecode frame; the payload is the
// response body.
type DecodeRequest struct {
	EntryID    string            `json:"entry_id"`
	Capability string            `json:"capability"`
	Status     int               `json:"status"`
	Headers    map[string]string `json:"headers,omitempty"`
	// Relation, when set, decodes the rows of that from_parent_get relation
	// of the capability's entity embedded in the body instead of the entity.
	// It may be a chain "summary.detail": relations each embedded in the
	// objects of the one before (catalog.EmbeddedPath), read at their
	// paths joined, when the middle entity has no get of its own.
	Relation string         `json:"relation,omitempty"`
	Page     map[string]any `json:"page,omitempty"`
	// RequestURL is the URL of the request this response answers (as
	// compiled, before the host injects credentials). Relative next-page
	// references (Link headers, next-URL fields) resolve against it per
	// RFC 3986; empty falls back to the catalog's http_backend.
	RequestURL string `json:"request_url,omitempty"`
	// Tape says the payload is the body already tokenised by the host
	// (guest/tape) rather than raw JSON, and asks for a tape answer:
	// frame(DecodeTapeHeader, tape table) instead of a JSON DecodeResponse.
	Tape bool `json:"tape,omitempty"`
	// Vars are the call's variables, for response rules that read one
	// (Plasm's array_find_pluck).
	Vars map[string]any `json:"vars,omitempty"`
}

// DecodeSpecRequest asks for the extraction spec of a capability (or of
// one from_parent_get relation embedded in its answer); see ExportDecodeSpec.
type DecodeSpecRequest struct {
	EntryID    string `json:"entry_id"`
	Capability string `json:"capability"`
	Relation   string `json:"relation,omitempty"`
}

// DecodeTapeHeader is the header of a tape answer to ExportDecode; the
// payload is the rows as a guest/tape table.
type DecodeTapeHeader struct {
	Next map[string]any `json:"next,omitempty"`
}

// Table is rows with named columns (wire field names).
type Table struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// Col returns the index of column name, or -1.
func (t *Table) Col(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// DecodeResponse carries decoded rows and the next page's state (nil when
// the list is exhausted).
type DecodeResponse struct {
	Table Table          `json:"table"`
	Next  map[string]any `json:"next,omitempty"`
}

package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plasmd/plasmd/internal/text"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// MCP batch bounds. Plasm's clients send one message per POST; batches
// (JSON-RPC arrays, protocol 2025-03-26) stay allowed but small, so one
// request cannot queue thousands of calls or log lines.
const (
	maxMCPBatchMessages = 16
	maxMCPBatchBytes    = 256 << 10
)

// mcpSessionHeader names a Streamable HTTP session.
const mcpSessionHeader = "Mcp-Session-Id"

// mcpOwners binds each Streamable HTTP session to the tenant that opened
// it and counts each tenant's live sessions. The SDK keeps sessions in one
// map for the whole server, so without this an id alone would open
// another tenant's event stream or DELETE it.
type mcpOwners struct {
	mu    sync.Mutex
	owner map[string]string // session id → tenant id
	count map[string]int    // tenant id → owned sessions plus opens in flight
}

// owns reports whether session id was opened by tenant tid.
func (o *mcpOwners) owns(id, tid string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owner[id] == tid
}

// reserve takes one of tid's limit session slots for an open in flight.
// At the limit it first forgets the tenant's sessions live no longer
// reports (closed by idle timeout or an error), since those close without
// passing through plasmd.
func (o *mcpOwners) reserve(tid string, limit int, live func() map[string]bool) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.count[tid] >= limit {
		o.pruneLocked(live())
	}
	if o.count[tid] >= limit {
		return false
	}
	if o.count == nil {
		o.owner, o.count = map[string]string{}, map[string]int{}
	}
	o.count[tid]++
	return true
}

// prune forgets sessions alive does not hold.
func (o *mcpOwners) prune(alive map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pruneLocked(alive)
}

func (o *mcpOwners) pruneLocked(alive map[string]bool) {
	for id, t := range o.owner {
		if !alive[id] {
			delete(o.owner, id)
			o.count[t]--
		}
	}
}

// settle turns tid's reservation into ownership of id, or frees it when
// no session was opened (id == "").
func (o *mcpOwners) settle(tid, id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if id == "" {
		o.count[tid]--
		return
	}
	o.owner[id] = tid
}

// release forgets a closed session.
func (o *mcpOwners) release(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if tid, ok := o.owner[id]; ok {
		delete(o.owner, id)
		o.count[tid]--
	}
}

// counts returns each tenant's MCP sessions (open ones and opens in
// flight), for /metrics.
func (o *mcpOwners) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]int, len(o.count))
	for t, n := range o.count {
		if n > 0 {
			out[t] = n
		}
	}
	return out
}

// liveMCPSessions returns the ids of the MCP server's open sessions.
func (a *App) liveMCPSessions() map[string]bool {
	ids := map[string]bool{}
	for ss := range a.mcp.Sessions() {
		if id := ss.ID(); id != "" {
			ids[id] = true
		}
	}
	return ids
}

// mcpGuard runs before the SDK's Streamable HTTP handler: it answers a
// session id opened by another tenant exactly as the SDK answers an
// unknown one (so neither existence nor ownership shows), caps each
// tenant's live sessions, and refuses oversized batches with one log line.
func (a *App) mcpGuard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, r := tenantOf(c), c.Request()
		if r.Method == http.MethodPost {
			if answered, err := a.checkMCPBatch(c, t); answered || err != nil {
				return err
			}
		}
		if id := r.Header.Get(mcpSessionHeader); id != "" {
			if !a.mcpOwners.owns(id, t.ID) {
				http.Error(c.Response(), "session not found", http.StatusNotFound)
				return nil
			}
			err := next(c)
			if r.Method == http.MethodDelete && c.Response().Status == http.StatusNoContent {
				a.mcpOwners.release(id)
			}
			return err
		}
		if r.Method != http.MethodPost {
			return next(c) // the SDK refuses GET and DELETE without an id
		}
		limit := t.Limits.MCPSessions()
		if !a.mcpOwners.reserve(t.ID, limit, a.liveMCPSessions) {
			a.metrics.QuotaExceeded(t.ID, "mcp_sessions")
			c.Response().Header().Set("Retry-After", "60")
			return problem.New(http.StatusTooManyRequests, "quota-exceeded",
				"this tenant has "+strconv.Itoa(limit)+" live MCP sessions, its limit (max_mcp_sessions): close one (DELETE /mcp) or wait for one to expire")
		}
		// Ownership is recorded as the response header goes out, before the
		// client can use the id (it may send its next request before this
		// handler returns).
		var settled atomic.Bool
		c.Response().Before(func() {
			if id := c.Response().Header().Get(mcpSessionHeader); id != "" && settled.CompareAndSwap(false, true) {
				a.mcpOwners.settle(t.ID, id)
			}
		})
		defer func() {
			if settled.CompareAndSwap(false, true) {
				a.mcpOwners.settle(t.ID, "")
			}
		}()
		return next(c)
	}
}

// checkMCPBatch refuses a JSON-RPC batch over the message or byte bound,
// or one in which two requests share an id, and leaves the body readable
// for the SDK. A refusal is logged once here; the SDK would otherwise log
// each bad message of a batch.
func (a *App) checkMCPBatch(c echo.Context, t *tenant.Tenant) (answered bool, err error) {
	r := c.Request()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return true, err // the body limit's 413, rendered by httpError
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	// The SDK's JSON decoding would replace each invalid byte by U+FFFD,
	// and a program argument would run with text the client never wrote.
	if off, line, col, bad := text.InvalidUTF8(string(body)); bad {
		p := problem.BadRequest("malformed-json", "the JSON-RPC body is not UTF-8 at byte %d (line %d, column %d): %s", off, line, col, text.InvalidUTF8Message(string(body), off))
		p.Hint = "send JSON encoded as UTF-8; invalid bytes are refused, not replaced"
		return true, p
	}
	if p := loneSurrogateProblem("JSON-RPC body", body); p != nil {
		return true, p
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return false, nil
	}
	n := -1
	var msgs []json.RawMessage
	if len(body) <= maxMCPBatchBytes {
		if json.Unmarshal(body, &msgs) != nil {
			return false, nil // the SDK answers malformed payloads
		}
		n = len(msgs)
	}
	if n >= 0 && n <= maxMCPBatchMessages {
		return refuseDuplicateCalls(c, msgs)
	}
	a.log.Warn("MCP batch refused", "tenant", t.ID, "bytes", len(body), "messages", n)
	return true, problem.New(http.StatusRequestEntityTooLarge, "batch-too-large",
		"a JSON-RPC batch may hold at most "+strconv.Itoa(maxMCPBatchMessages)+" messages and "+strconv.Itoa(maxMCPBatchBytes>>10)+" KiB; send messages one per request")
}

// refuseDuplicateCalls answers a batch in which two requests share an id
// with HTTP 400 and, for each id of the batch's requests, a JSON-RPC
// invalid-request error naming the repeated id, as the SDK answers a
// request whose id is in flight on another POST. The
// SDK would expect one answer for the id and drop the other request's.
// Nothing in the batch runs, so the answer cannot be mistaken for one
// request's result. A batch the SDK cannot decode is left to it.
func refuseDuplicateCalls(c echo.Context, raw []json.RawMessage) (answered bool, err error) {
	msgs := make([]jsonrpc.Message, 0, len(raw))
	for _, r := range raw {
		m, err := jsonrpc.DecodeMessage(r)
		if err != nil {
			return false, nil
		}
		msgs = append(msgs, m)
	}
	id, dup := duplicateCall(msgs)
	if !dup {
		return false, nil
	}
	// Every request of the batch gets its answer, once per id, so a
	// client waiting for any of them is not left to its timeout.
	var answers []json.RawMessage
	seen := map[jsonrpc.ID]bool{}
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.IsCall() || seen[req.ID] {
			continue
		}
		seen[req.ID] = true
		b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: duplicateInBatch(id)}})
		if err != nil {
			return true, err
		}
		answers = append(answers, b)
	}
	b, err := json.Marshal(answers)
	if err != nil {
		return true, err
	}
	return true, c.JSONBlob(http.StatusBadRequest, b)
}

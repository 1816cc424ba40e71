package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plasmd/plasmd/internal/text"
)

// maxStdioLine bounds one stdio message, as the SDK's own transport does.
const maxStdioLine = mcp.DefaultMaxLineLength

// GuardedStdio is the MCP stdio transport over in and out (plasmd stdio:
// os.Stdin, os.Stdout), with every line checked before the SDK reads it.
// The SDK's newline-delimited transport ends the whole connection at the
// first line that is not a JSON-RPC message ("garbage", {"x":1}, [] or a
// jsonrpc of "1.0"), so one bad line from a client made plasmd exit. Here
// such a line is answered with a JSON-RPC error (-32700 parse error, or
// -32600 invalid request with the line's id when it has one) and skipped,
// as JSON-RPC 2.0 asks and as the HTTP transport answers it.
func GuardedStdio(in io.Reader, out io.Writer) mcp.Transport {
	pr, pw := io.Pipe()
	pending := &pendingCalls{}
	w := &lockedWriter{w: out, pending: pending}
	go func() { _ = pw.CloseWithError(filterFrames(in, pw, guardWrites{w}, pending)) }()
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

// lockedWriter serialises the SDK's writes (one Write per message) with
// the guard's error answers, so lines never interleave. Each SDK write
// that answers requests releases their ids.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending *pendingCalls
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	// Released before the answer goes out, so a client that reuses the id
	// as soon as it reads the answer is not refused.
	l.pending.answered(p)
	return l.write(p)
}

func (l *lockedWriter) write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// guardWrites writes the guard's own answers: they answer no request the
// SDK read, so they release no id.
type guardWrites struct{ l *lockedWriter }

func (g guardWrites) Write(p []byte) (int, error) { return g.l.write(p) }

// filterFrames copies the well-formed lines of in to sdk and answers the
// others on out; it returns nil at the end of in. pending holds the ids
// of the requests passed to the SDK and not yet answered.
func filterFrames(in io.Reader, sdk io.Writer, out io.Writer, pending *pendingCalls) error {
	br := bufio.NewReaderSize(in, 64<<10)
	g := frameGuard{pending: pending}
	for {
		line, over, err := readLine(br)
		if len(line) > 0 || over {
			if over {
				writeRPCError(out, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over %d bytes", maxStdioLine))
			} else if r := g.check(line); r.code != 0 {
				r.write(out)
			} else if _, werr := sdk.Write(append(line, '\n')); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its end, bounded by maxStdioLine (over:
// the rest of a longer line was discarded).
func readLine(br *bufio.Reader) (line []byte, over bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > maxStdioLine+2 {
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSpace(line)
		// The SDK counts every byte it reads for a message, the newline
		// before it included, and ends the session at maxStdioLine: a
		// message it would refuse is answered here instead.
		if len(line) > maxStdioLine-1 {
			over, line = true, nil
		}
		return line, over, err
	}
}

// frameGuard remembers what the checks depend on: the protocol version a
// client asked for. The SDK ends the connection at a batch once it
// negotiated 2025-06-18 or later, and it negotiates what the client asks
// for when it supports it, else its latest; so batches pass only before
// initialize or after one asking for an older version.
type frameGuard struct {
	noBatches bool
	pending   *pendingCalls
}

// batchingVersions are the protocol versions that allow JSON-RPC batches.
var batchingVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// refusal is the guard's answer to a line it does not pass on (code 0:
// it passes). A single message is answered with one error carrying id
// (null when the line names none, or names one the client could mistake
// for another request's); a refused batch with one error per request in
// it that can be told apart (batchIDs), so no request of the batch goes
// unanswered.
type refusal struct {
	code     int
	id       any
	why      string
	batch    bool
	batchIDs []any
}

func (r refusal) write(out io.Writer) {
	if !r.batch || len(r.batchIDs) == 0 {
		writeRPCError(out, r.id, r.code, r.why)
		return
	}
	answers := make([]map[string]any, len(r.batchIDs))
	for i, id := range r.batchIDs {
		answers[i] = rpcError(id, r.code, r.why)
	}
	b, err := json.Marshal(answers)
	if err != nil {
		return
	}
	_, _ = out.Write(append(b, '\n'))
}

// check reports why a line is not a message the SDK reads, and how to
// answer it.
func (g *frameGuard) check(line []byte) refusal {
	if !json.Valid(line) {
		return refusal{code: jsonrpc.CodeParseError, why: "parse error: the line is not one JSON value"}
	}
	// The SDK's decoding would turn invalid bytes and escaped lone
	// surrogates into U+FFFD, and a program would run with text the
	// client never wrote (as HTTP bodies are checked: decodeJSONBody).
	if off, _, _, bad := text.InvalidUTF8(string(line)); bad {
		return refusal{code: jsonrpc.CodeParseError, why: fmt.Sprintf("parse error: the line is not UTF-8 at byte %d; invalid bytes are refused, not replaced", off)}
	}
	if off, lone := text.LoneSurrogate(string(line)); lone {
		return refusal{code: jsonrpc.CodeParseError, why: fmt.Sprintf("parse error: the line escapes half a UTF-16 surrogate pair at byte %d (%s) without its other half", off, line[off:off+6])}
	}
	if line[0] == '[' {
		return g.checkBatch(line)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return refusal{code: jsonrpc.CodeInvalidRequest, id: frameID(line), why: "invalid request: " + err.Error()}
	}
	if r := g.admit([]jsonrpc.Message{msg}); r.code != 0 {
		return r
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		g.noBatches = !batchingVersions[p.ProtocolVersion]
	}
	return refusal{}
}

func (g *frameGuard) checkBatch(line []byte) refusal {
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
		return refusal{code: jsonrpc.CodeInvalidRequest, why: "invalid request: an empty batch"}
	}
	refuse := func(why string) refusal {
		return refusal{code: jsonrpc.CodeInvalidRequest, why: why, batch: true, batchIDs: g.answerable(batch)}
	}
	if g.noBatches {
		return refuse("invalid request: JSON-RPC batches are not part of the protocol version this session uses; send messages one per line")
	}
	msgs := make([]jsonrpc.Message, 0, len(batch))
	for _, m := range batch {
		msg, err := jsonrpc.DecodeMessage(m)
		if err != nil {
			return refuse("invalid request in a batch: " + err.Error())
		}
		msgs = append(msgs, msg)
	}
	// The SDK (v1.8.0) never answers the requests of a stdio batch
	// that also holds a notification or a response.
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); !ok || !req.IsCall() {
			return refuse("invalid request: a batch on stdio may hold only requests; send notifications and responses one per line")
		}
	}
	// The SDK ends the connection at a batch with a repeated id.
	if id, dup := duplicateCall(msgs); dup {
		return refuse(duplicateInBatch(id))
	}
	if r := g.admit(msgs); r.code != 0 {
		return refuse(r.why)
	}
	return refusal{}
}

// answerable lists the ids of a refused batch's members to answer, each
// once: every member's id but those still in flight, whose answer the
// client would take for the pending request's.
func (g *frameGuard) answerable(batch []json.RawMessage) []any {
	var ids []any
	seen := map[any]bool{}
	for _, m := range batch {
		var id any
		if msg, err := jsonrpc.DecodeMessage(m); err == nil {
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.IsCall() || g.pending.has(req.ID) {
				continue
			}
			id = req.ID.Raw()
		} else if id = frameID(m); id == nil || g.pendingRaw(id) {
			continue
		}
		if key := idKey(id); !seen[key] {
			seen[key] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// pendingRaw reports whether a JSON id (a number or a string) is that of
// a request still in flight; one the SDK would not take as an id is not.
func (g *frameGuard) pendingRaw(id any) bool {
	rid, err := jsonrpc.MakeID(id)
	return err == nil && g.pending.has(rid)
}

// idKey makes ids compare as the SDK compares them (7 and 7.0 are one).
func idKey(id any) any {
	switch v := id.(type) {
	case float64:
		return int64(v)
	case int64:
		return v
	}
	return id
}

// admit records the requests of a line as pending, or refuses the line
// when one of them reuses the id of a request not yet answered. The
// refusal's id is null: an answer carrying the id would be taken by the
// client for the answer to the pending request.
func (g *frameGuard) admit(msgs []jsonrpc.Message) refusal {
	if g.pending == nil {
		return refusal{}
	}
	if dup, ok := g.pending.admit(msgs); !ok {
		return refusal{code: jsonrpc.CodeInvalidRequest, why: "invalid request: request id " + idText(dup) + " is still in flight on this session; JSON-RPC ids must be unique per request. The line was not run"}
	}
	return refusal{}
}

// frameID is the line's id when it is a string or a number.
func frameID(line []byte) any {
	var m struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	switch m.ID.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

func rpcError(id any, code int, msg string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}}
}

func writeRPCError(out io.Writer, id any, code int, msg string) {
	b, err := json.Marshal(rpcError(id, code, msg))
	if err != nil {
		return
	}
	_, _ = out.Write(append(b, '\n'))
}

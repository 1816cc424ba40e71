package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC request ids, as the go-sdk compares them.
//
// JSON-RPC 2.0 asks a client for an id per request, and MCP forbids
// reusing one within a session. The go-sdk (v1.8.0) keys what it tracks by
// id (jsonrpc.ID, where 7 and 7.0 are the same id) and, given two
// requests with one id, answers one of them: a Streamable HTTP batch
// collapses them into one expected answer; on stdio a batch holding them
// ends the whole connection, and a request whose id is still in flight is
// refused with an error whose id is null, which no JSON-RPC client can
// tie to anything. plasmd refuses such a request itself, with an error
// naming the id, so no request goes unanswered.

// duplicateCall reports the first id that two requests (calls, not
// notifications or responses) of msgs share.
func duplicateCall(msgs []jsonrpc.Message) (jsonrpc.ID, bool) {
	seen := make(map[jsonrpc.ID]bool, len(msgs))
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		if seen[req.ID] {
			return req.ID, true
		}
		seen[req.ID] = true
	}
	return jsonrpc.ID{}, false
}

// idText renders an id for an error message as JSON: 7 or "abc".
func idText(id jsonrpc.ID) string {
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return fmt.Sprint(id.Raw())
	}
	return string(b)
}

// duplicateInBatch is the error text for a batch refused for id.
func duplicateInBatch(id jsonrpc.ID) string {
	return "invalid request: request id " + idText(id) + " appears more than once in this batch; JSON-RPC ids must be unique per request. Nothing in the batch was run"
}

// pendingCalls is the set of a stdio session's requests the SDK has read
// and not yet answered.
type pendingCalls struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]bool
}

// admit records the calls of msgs as pending. It admits none of them and
// reports the offending id when one is already pending or two of msgs
// share an id.
func (p *pendingCalls) admit(msgs []jsonrpc.Message) (jsonrpc.ID, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var calls []jsonrpc.ID
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			if p.ids[req.ID] {
				return req.ID, false
			}
			calls = append(calls, req.ID)
		}
	}
	if p.ids == nil {
		p.ids = map[jsonrpc.ID]bool{}
	}
	for _, id := range calls {
		p.ids[id] = true
	}
	return jsonrpc.ID{}, true
}

// has reports whether id is pending.
func (p *pendingCalls) has(id jsonrpc.ID) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids[id]
}

// answered forgets the requests a line the SDK wrote answers (one
// response, or a batch of them).
func (p *pendingCalls) answered(line []byte) {
	ids := responseIDs(line)
	if len(ids) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		delete(p.ids, id)
	}
}

// responseIDs returns the ids of the responses in line. The SDK writes a
// response's "id" before its "result" or "error", so a token scan finds it
// without reading a large result; anything else is decoded whole.
func responseIDs(line []byte) []jsonrpc.ID {
	if id, decided := leadingResponseID(line); decided {
		if id.IsValid() {
			return []jsonrpc.ID{id}
		}
		return nil
	}
	var msgs []json.RawMessage
	if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &msgs) != nil {
			return nil
		}
	} else {
		msgs = []json.RawMessage{t}
	}
	var ids []jsonrpc.ID
	for _, m := range msgs {
		if msg, err := jsonrpc.DecodeMessage(m); err == nil {
			if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
				ids = append(ids, resp.ID)
			}
		}
	}
	return ids
}

// leadingResponseID reads {"jsonrpc":…,"id":X,"result"|"error": … token
// by token. decided is true when the opening tokens settle what the line
// is: a response (id is its id) or a request or notification (id is not
// valid); false for any other shape.
func leadingResponseID(line []byte) (id jsonrpc.ID, decided bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	haveID := false
	for range 3 {
		tok, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		switch tok {
		case "jsonrpc":
			if _, err := dec.Token(); err != nil {
				return jsonrpc.ID{}, false
			}
		case "id":
			v, err := dec.Token()
			if err != nil {
				return jsonrpc.ID{}, false
			}
			switch v := v.(type) {
			case json.Number:
				f, ferr := v.Float64()
				if ferr != nil {
					return jsonrpc.ID{}, false
				}
				id, _ = jsonrpc.MakeID(f)
			case string:
				id, _ = jsonrpc.MakeID(v)
			default:
				return jsonrpc.ID{}, false
			}
			haveID = true
		case "result", "error":
			return id, haveID
		case "method":
			return jsonrpc.ID{}, true
		default:
			return jsonrpc.ID{}, false
		}
	}
	return jsonrpc.ID{}, false
}

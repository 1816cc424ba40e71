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
	w := &lockedWriter{w: out}
	go func() { _ = pw.CloseWithError(filterFrames(in, pw, w)) }()
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

// lockedWriter serialises the SDK's writes (one Write per message) with
// the guard's error answers, so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// filterFrames copies the well-formed lines of in to sdk and answers the
// others on out; it returns nil at the end of in.
func filterFrames(in io.Reader, sdk io.Writer, out io.Writer) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var g frameGuard
	for {
		line, over, err := readLine(br)
		if len(line) > 0 || over {
			if over {
				writeRPCError(out, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over %d bytes", maxStdioLine))
			} else if code, id, why := g.check(line); code != 0 {
				writeRPCError(out, id, code, why)
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
}

// batchingVersions are the protocol versions that allow JSON-RPC batches.
var batchingVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// check reports why a line is not a message the SDK reads (code 0: it
// is), with the id to answer when the line names one.
func (g *frameGuard) check(line []byte) (code int, id any, why string) {
	if !json.Valid(line) {
		return jsonrpc.CodeParseError, nil, "parse error: the line is not one JSON value"
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
			return jsonrpc.CodeInvalidRequest, nil, "invalid request: an empty batch"
		}
		if g.noBatches {
			return jsonrpc.CodeInvalidRequest, nil, "invalid request: JSON-RPC batches are not part of the protocol version this session uses; send messages one per line"
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return jsonrpc.CodeInvalidRequest, nil, "invalid request in a batch: " + err.Error()
			}
		}
		return 0, nil, ""
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return jsonrpc.CodeInvalidRequest, frameID(line), "invalid request: " + err.Error()
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		g.noBatches = !batchingVersions[p.ProtocolVersion]
	}
	return 0, nil, ""
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

func writeRPCError(out io.Writer, id any, code int, msg string) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	if err != nil {
		return
	}
	_, _ = out.Write(append(b, '\n'))
}

package server

import (
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// encodableResults answers a call whose result cannot be encoded with an
// internal error instead of silence. The go-sdk (v1.8.0) encodes a
// handler's result only when writing the response; if that fails it logs
// "jsonrpc2 internal error" and writes nothing, so the client waits for the
// id forever, and on stdio the guard keeps the id pending and refuses its
// reuse. Only tools/call and resources/read are checked: their results
// carry data from catalogs, backends and vendor modules; the SDK builds
// every other result itself.
//
// The check encodes the result once more than the SDK does; it cannot
// hand its bytes on, because the SDK still annotates the result (its
// _meta) after the middleware returns.
func (a *App) encodableResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || (method != "tools/call" && method != "resources/read") {
			return res, err
		}
		// As the SDK encodes it (no HTML escaping); the bytes are dropped.
		enc := json.NewEncoder(io.Discard)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			a.log.Error("MCP result cannot be encoded; answering an internal error", "method", method, "err", err)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: "internal error: the result of " + method + " could not be encoded (" + err.Error() + "); the call ran, but its answer cannot be sent"}
		}
		return res, nil
	}
}

package server

import (
	"context"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plasmd/plasmd/internal/text"
)

// mcpLevels are the log levels MCP defines for logging/setLevel (the
// syslog severities of RFC 5424, least severe first).
var mcpLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// levelGuard refuses logging/setLevel with a level MCP does not define.
// The SDK (v1.8.0) stores whatever string it is given as the session's
// level and compares unknown levels as debug, so "loud" silently turned
// on every message; an invalid-params error is what the schema's enum
// calls for, and the session keeps the level it had.
func levelGuard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "logging/setLevel" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.SetLoggingLevelParams)
		if !ok || p == nil {
			return nil, levelError("logging/setLevel needs params with a level")
		}
		for _, l := range mcpLevels {
			if p.Level == l {
				return next(ctx, method, req)
			}
		}
		return nil, levelError("unknown log level " + strconv.Quote(text.Clip(string(p.Level), 64)))
	}
}

// levelError is the invalid-params error naming the allowed levels.
func levelError(why string) *jsonrpc.Error {
	names := make([]string, len(mcpLevels))
	for i, l := range mcpLevels {
		names[i] = string(l)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: why + ": the level must be one of " + strings.Join(names, ", ")}
}

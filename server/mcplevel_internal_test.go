package server

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLevelGuardLeavesLevelAlone: a refused level never reaches the SDK's
// setLevel (the next handler), so the session keeps the level it had;
// other methods and the eight MCP levels pass through.
func TestLevelGuardLeavesLevelAlone(t *testing.T) {
	for _, tc := range []struct {
		method string
		params mcp.Params
		pass   bool
	}{
		{"logging/setLevel", &mcp.SetLoggingLevelParams{Level: "info"}, true},
		{"logging/setLevel", &mcp.SetLoggingLevelParams{Level: "emergency"}, true},
		{"logging/setLevel", &mcp.SetLoggingLevelParams{Level: "loud"}, false},
		{"logging/setLevel", &mcp.SetLoggingLevelParams{Level: "Info"}, false},
		{"logging/setLevel", &mcp.SetLoggingLevelParams{Level: ""}, false},
		{"logging/setLevel", &mcp.SetLoggingLevelParams{Level: "info\x00"}, false},
		{"logging/setLevel", nil, false},
		{"ping", &mcp.PingParams{}, true},
	} {
		called := false
		next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
			called = true
			return nil, nil
		}
		req := &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{}
		var r mcp.Request = req
		if p, ok := tc.params.(*mcp.SetLoggingLevelParams); ok {
			req.Params = p
		} else if p, ok := tc.params.(*mcp.PingParams); ok {
			r = &mcp.ServerRequest[*mcp.PingParams]{Params: p}
		}
		_, err := levelGuard(next)(context.Background(), tc.method, r)
		if called != tc.pass {
			t.Errorf("%s %v: reached the SDK = %v, want %v", tc.method, tc.params, called, tc.pass)
		}
		var we *jsonrpc.Error
		if !tc.pass && (!errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams) {
			t.Errorf("%s %v: err %v, want invalid params", tc.method, tc.params, err)
		}
	}
}

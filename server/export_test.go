package server

import "github.com/modelcontextprotocol/go-sdk/mcp"

// NotifyHandled reports how many invalidation notifications forwarders
// have handed to sessions (sent, or filtered by a session's log level).
func (a *App) NotifyHandled() int64 { return a.notifyHandled.Load() }

// CatalogLoads exposes, to tests, how often each catalog was installed into
// tenant tid's engine instances (nil before its first call).
func (a *App) CatalogLoads(tid string) map[string]uint64 { return a.svc.CatalogLoads(tid) }

// AddMCPTool registers one more tool on the app's MCP server, for tests of
// what happens to a result the server cannot send.
func (a *App) AddMCPTool(tool *mcp.Tool, h mcp.ToolHandler) { a.mcp.AddTool(tool, h) }

package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/problem"
)

// runNotifications reports a plasm_run to the MCP client while it works:
// notifications/progress after every backend call when the request carries
// a progress token, and notifications/message log lines (debug per call,
// info when the run ends, warning when it fails) that the SDK sends only
// at or above the session's level: info from initialize (notify.go), then
// whatever the client chooses with logging/setLevel. It returns the context the run must use and a function to
// call with the run's outcome.
func (a *App) runNotifications(ctx context.Context, req *mcp.CallToolRequest, ref string) (context.Context, func(*core.Answer, error)) {
	ss := req.Session
	if ss == nil {
		return ctx, func(*core.Answer, error) {}
	}
	logger := slog.New(mcp.NewLoggingHandler(ss, &mcp.LoggingHandlerOptions{LoggerName: "plasm"}))
	token := req.Params.GetProgressToken()
	var calls atomic.Int64
	progress := func(ctx context.Context, msg string) {
		if token == nil {
			return
		}
		p := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(calls.Load()), Message: msg}
		if err := ss.NotifyProgress(ctx, p); err != nil {
			a.log.Debug("progress notification", "err", err)
		}
	}
	probe := &core.RunProbe{After: func(ctx context.Context) {
		n := calls.Add(1)
		progress(ctx, fmt.Sprintf("%d backend calls so far", n))
		logger.DebugContext(ctx, "backend call", "logical_session_ref", ref, "calls", n)
	}}
	return core.WithProbe(ctx, probe), func(ans *core.Answer, err error) {
		if err != nil {
			logger.WarnContext(ctx, "plasm_run failed", "logical_session_ref", ref, "detail", problem.From(err).Detail)
			return
		}
		switch {
		case ans.Outcome != nil:
			rows := 0
			for _, r := range ans.Outcome.Roots {
				rows += len(r.Table.Rows)
			}
			progress(ctx, fmt.Sprintf("done: %d backend calls, %d rows", calls.Load(), rows))
			logger.InfoContext(ctx, "plasm_run done", "logical_session_ref", ref, "summary", ans.Outcome.Plan.Summary,
				"calls", calls.Load(), "rows", rows)
		case ans.Op != nil:
			logger.InfoContext(ctx, "plasm_run operation", "logical_session_ref", ref, "handle", ans.Op.Handle, "state", ans.Op.State)
		}
	}
}

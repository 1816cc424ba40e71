package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmd/plasmd/server/internal/core"
	"github.com/plasmd/plasmd/server/internal/results"
	"github.com/plasmd/plasmd/server/internal/session"
)

// Long operations on the surfaces (core/operations.go has the semantics).

// waitParam reads ?wait=: "false" asks for an operation, "true" for a
// blocking run; absent lets the server decide by the plan's cost.
func waitParam(c echo.Context) *bool {
	switch c.QueryParam("wait") {
	case "false":
		f := false
		return &f
	case "true":
		t := true
		return &t
	}
	return nil
}

// operationResponse answers a run that is (still) an operation: 202 with
// its progress, as JSON or as the Markdown an MCP client sees.
func operationResponse(c echo.Context, format string, ans *core.Answer) error {
	if format == "application/json" || format == "application/x-ndjson" {
		return c.JSON(http.StatusAccepted, map[string]any{"operation": core.OpMeta(ans.Op), "progress": ans.Text})
	}
	return c.Blob(http.StatusAccepted, "text/markdown; charset=utf-8", []byte(ans.Text))
}

// executeOperation serves GET /execute/{ph}/{s}/operations/{handle}: the
// operation's state and progress without waiting.
func (a *App) executeOperation(c echo.Context) error {
	ex, err := a.loadExecute(c)
	if err != nil {
		return err
	}
	op, err := a.svc.Operation(c.Request().Context(), tenantOf(c), core.RunScope{Execute: &ex, Ref: "s0"}, c.Param("handle"))
	if err != nil {
		return err
	}
	body := core.OpMeta(&op)
	body["progress"] = core.ProgressText(op)
	body["summary"] = op.Summary
	if op.State == session.OpDone {
		// The result is run r/N of this session (GET …/runs lists it).
		body["run_n"] = op.RunN
	}
	return c.JSON(http.StatusOK, body)
}

// answerResult renders an Answer as a plasm_run result: progress lines for
// an operation, then the results when there are any.
func answerResult(ans *core.Answer, meta map[string]any) *mcp.CallToolResult {
	extra := map[string]any{}
	if ans.Op != nil {
		meta["operation"] = core.OpMeta(ans.Op)
		extra["operation"] = core.OpMeta(ans.Op)
	}
	if ans.Outcome == nil {
		res := withMeta(ans.Text, meta, extra)
		// A failed operation is the program's failure, reported late:
		// clients that branch on isError must see it as one.
		res.IsError = ans.Op != nil && ans.Op.State == session.OpFailed
		return res
	}
	for k, v := range runMeta(ans.Outcome) {
		meta[k] = v
	}
	extra["results"] = jsonRoots(ans.Outcome.Roots)
	text := results.Markdown(ans.Outcome.Roots)
	if ans.Text != "" {
		text = ans.Text + "\n" + text
	}
	return withMeta(text, meta, extra)
}

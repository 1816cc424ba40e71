package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// runProgram implements `plasmd run`: open a session on the given seeds and
// run one program, printing what an agent would see. It drives the same
// HTTP handler `serve` exposes, in process, so its behaviour is the server's.
func runProgram(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	var seeds multiFlag
	fs.Var(&seeds, "seed", "api:Entity to expose (repeatable), e.g. tracker:Issue")
	format := fs.String("format", "markdown", "markdown, json, ndjson or tsv")
	planOnly := fs.Bool("plan", false, "dry run: print the plan, call no backend")
	force := fs.Bool("force", false, "run a review plan (mutations, unbounded or unprojected reads) as is")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: plasmd run [--demo] [--catalogs DIR] --seed api:Entity… [--plan | --force] [--format F] PROGRAM|-`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	} else if len(seeds) == 0 || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	program := fs.Arg(0)
	if program == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(stderr, "plasmd:", err)
			return 1
		}
		program = string(b)
	}
	accept, ok := map[string]string{"markdown": "text/markdown", "json": "application/json", "ndjson": "application/x-ndjson", "tsv": "text/tab-separated-values"}[*format]
	if !ok {
		fmt.Fprintf(stderr, "plasmd: --format %q: want markdown, json, ndjson or tsv\n", *format)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.logLevel == "info" {
		c.logLevel = "warn" // keep a one-shot command's output to the result
	}
	app, cleanup, err := c.setup(ctx, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "plasmd:", err)
		return 1
	}
	defer cleanup()
	h := app.Handler()
	do := func(method, path, ctype, accept, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body)).WithContext(ctx)
		req.Host = "127.0.0.1"
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}

	// The first catalog opens the session; the others federate into it.
	var order []string
	byAPI := map[string][]string{}
	for _, s := range seeds {
		api, entity, ok := strings.Cut(s, ":")
		if !ok || api == "" || entity == "" {
			fmt.Fprintf(stderr, "plasmd: --seed %q: want api:Entity\n", s)
			return 2
		}
		if _, seen := byAPI[api]; !seen {
			order = append(order, api)
		}
		byAPI[api] = append(byAPI[api], entity)
	}
	open, _ := json.Marshal(map[string]any{"entry_id": order[0], "entities": byAPI[order[0]]})
	code, body := do(http.MethodPost, "/execute", "application/json", "", string(open))
	if code != http.StatusSeeOther {
		fmt.Fprintln(stderr, "plasmd: open session:", problemText(body))
		return 1
	}
	var opened struct {
		Location string `json:"location"`
	}
	if err := json.Unmarshal([]byte(body), &opened); err != nil || opened.Location == "" {
		fmt.Fprintln(stderr, "plasmd: open session: unexpected answer:", body)
		return 1
	}
	for _, api := range order[1:] {
		var more []map[string]string
		for _, e := range byAPI[api] {
			more = append(more, map[string]string{"api": api, "entity": e})
		}
		b, _ := json.Marshal(map[string]any{"seeds": more})
		if code, body := do(http.MethodPost, opened.Location+"/context", "application/json", "", string(b)); code != http.StatusOK {
			fmt.Fprintln(stderr, "plasmd: federate", api+":", problemText(body))
			return 1
		}
	}
	return runOnce(do, opened.Location, program, accept, *planOnly, *force, stdout, stderr)
}

// runOnce sends the program to the opened session: a dry run with plan, a
// forced live run with force, else a live run that review gating may
// refuse (then it says how to go on).
func runOnce(do func(method, path, ctype, accept, body string) (int, string), path, program, accept string,
	plan, force bool, stdout, stderr io.Writer) int {
	switch {
	case plan:
		path += "?mode=plan"
		accept = "application/json"
	case force:
		// One command is one dry run and one live run at most; a person
		// who typed --force has reviewed the program.
		path += "?force=true"
	}
	code, body := do(http.MethodPost, path, "text/plain", accept, program)
	if code != http.StatusOK {
		fmt.Fprintln(stderr, "plasmd:", problemText(body))
		if code == http.StatusPreconditionRequired {
			fmt.Fprintln(stderr, "plasmd: check the plan with --plan, then run again with --force")
		}
		return 1
	}
	fmt.Fprint(stdout, body)
	if !strings.HasSuffix(body, "\n") {
		fmt.Fprintln(stdout)
	}
	return 0
}

// problemText renders a problem document the way a person reads an error:
// position, detail, hint.
func problemText(body string) string {
	var p struct {
		Detail string `json:"detail"`
		Line   int    `json:"line"`
		Column int    `json:"column"`
		Hint   string `json:"hint"`
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil || p.Detail == "" {
		return strings.TrimSpace(body)
	}
	s := p.Detail
	if p.Line > 0 {
		s = fmt.Sprintf("%d:%d: %s", p.Line, p.Column, s)
	}
	if p.Hint != "" {
		s += "\nhint: " + p.Hint
	}
	return s
}

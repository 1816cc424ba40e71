package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/plasmd/plasmd/server"
)

// drainStdio runs once the stdio client is gone (end of input, or a first
// SIGINT/SIGTERM): operations this process accepted (wait: false, or a
// bulk mutation the server made one) go on to their end, each within its
// own time limit, so a one-shot client's next process can wait(…) on them
// through the shared store instead of finding them cut off half-way. The
// second signal this process receives stops them (clients send SIGTERM a
// moment after closing stdin, so one signal alone does not): each is then
// recorded failed, saying the process ended and how many calls it made. A
// kill no handler sees is noticed by the next process's wait
// (server/internal/core/opowner.go). sigs carries every signal since the
// process started.
func drainStdio(app *server.App, stderr io.Writer, sigs <-chan os.Signal) {
	n := app.RunningOperations()
	if n == 0 {
		return
	}
	fmt.Fprintf(stderr, "plasmd: client gone; finishing %d running operation(s) before exiting (each within its time limit; a second SIGINT/SIGTERM stops them)\n", n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		seen := 0
		for {
			select {
			case <-sigs:
				if seen++; seen >= 2 {
					fmt.Fprintln(stderr, "plasmd: stopping the running operations")
					cancel()
					return
				}
				fmt.Fprintln(stderr, "plasmd: still finishing operations; signal again to stop them")
			case <-ctx.Done():
				return
			}
		}
	}()
	if left := app.DrainOperations(ctx); left > 0 {
		fmt.Fprintf(stderr, "plasmd: %d operation(s) stopped unfinished; they are recorded failed\n", left)
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/plasmd/plasmd/server"
)

// newLogger builds the process logger: text for people, JSON (one object a
// line, for log pipelines) with --log-format json.
func newLogger(out io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(out, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(out, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// newTracerProvider exports run spans over OTLP/HTTP when an endpoint is
// set; without one tracing is off (nil provider).
func newTracerProvider(ctx context.Context, endpoint string, log *slog.Logger) (trace.TracerProvider, func(), error) {
	if endpoint == "" {
		return nil, func() {}, nil
	}
	tp, err := server.OTLPTracerProvider(ctx, endpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	return tp, func() {
		// Flush what is buffered, but never hang the exit on a collector
		// that went away.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("otlp shutdown", "err", err)
		}
	}, nil
}

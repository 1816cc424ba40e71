package server

import (
	"context"
	"log/slog"
	"testing"
)

// TestDiscardLoggerBuildsNothing: an App configured without a logger
// has a logger disabled at every level, so no log line is ever formatted
// (slog checks Enabled before building a record).
func TestDiscardLoggerBuildsNothing(t *testing.T) {
	l := discardLogger()
	for _, lv := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelError + 100} {
		if l.Enabled(context.Background(), lv) {
			t.Errorf("the default logger is enabled at %v", lv)
		}
	}
	l.Info("run", slog.String("tenant", "t")) // must not panic
}

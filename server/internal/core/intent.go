package core

import (
	"unicode/utf8"

	"github.com/plasmd/plasmd/server/internal/problem"
)

// MaxIntent bounds an intent in bytes. An intent is one sentence naming the
// goal; it keys a logical session and is kept with it (store, activity
// journal, console) and logged when it differs from the one a client
// announced. Unbounded, one tenant could park a megabyte in each of its
// logical sessions and write a megabyte log line per call.
const MaxIntent = 4 << 10

// CheckIntent refuses an intent over MaxIntent or not UTF-8 text.
func CheckIntent(intent string) error {
	if len(intent) > MaxIntent {
		return problem.BadRequest("intent-too-long", "intent is %d bytes; the limit is %d", len(intent), MaxIntent)
	}
	if !utf8.ValidString(intent) {
		return problem.BadRequest("bad-intent", "intent is not UTF-8 text")
	}
	return nil
}

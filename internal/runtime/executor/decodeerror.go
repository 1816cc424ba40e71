package executor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/runtime/egress"
)

// decodeError is the run's error for a response the decoder refused. The
// decoder quotes the backend's words whatever the status (a 200 page
// without its list beside an error sign, a GraphQL error, a non-2xx
// body), and a backend may echo the credential it was sent, so every
// message is redacted (redactSecret), not only a non-2xx one's. A non-2xx
// answer becomes a BackendError; a decoder's *abi.Error keeps its code and
// hint, and gets the "decode <capability>:" prefix only when it lacks it
// (the standard decoder writes it itself).
func (r *run) decodeError(capability, entry string, creq *abi.CompiledRequest, resp *egress.Response, err error) error {
	secrets := r.secretsFor(entry)
	var ae *abi.Error
	if !errors.As(err, &ae) {
		if msg := err.Error(); redactSecret(msg, creq, secrets, resp.Credential) != msg {
			// Rare (the decoders answer *abi.Error); the secret outweighs
			// the wrapped error's kind.
			return fmt.Errorf("decode %s: %s", capability, redactSecret(msg, creq, secrets, resp.Credential))
		}
		return fmt.Errorf("decode %s: %w", capability, err)
	}
	msg := redactSecret(ae.Message, creq, secrets, resp.Credential)
	if resp.Status < 200 || resp.Status > 299 {
		return &BackendError{Capability: capability, Status: resp.Status, Message: msg, RetryAfter: resp.Headers.Get("Retry-After")}
	}
	out := *ae
	out.Message, out.Hint = msg, redactSecret(ae.Hint, creq, secrets, resp.Credential)
	if prefix := "decode " + capability + ":"; !strings.HasPrefix(out.Message, prefix) {
		out.Message = prefix + " " + out.Message
	}
	return &out
}

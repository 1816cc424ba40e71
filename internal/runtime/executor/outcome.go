package executor

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	// Named apart from this package's text(v) (transform.go).
	quoted "github.com/plasmd/plasmd/internal/text"
)

// Backend outcomes as the surfaces report them: a missing row is its own
// error (not a gateway failure), and a delete answers with an explicit
// "deleted" row rather than a row of blank cells.

// ErrNotFound means a read by id found no row.
var ErrNotFound = errors.New("not found")

// NotFoundError names the entity and id a get did not find: the backend
// answered 404, or (GraphQL) answered with an empty node.
type NotFoundError struct {
	Entity string
	ID     any
	// Key, for an entity read by a compound key (Issue(owner=…, repo=…,
	// number=…)), names each part: such a get has no single id, and a
	// message naming "<nil>" would not tell the agent which row was missing.
	Key        []KeyPart
	Capability string
}

// KeyPart is one named part of a compound key.
type KeyPart struct {
	Name  string
	Value any
}

func (e *NotFoundError) Error() string {
	if len(e.Key) > 0 {
		parts := make([]string, len(e.Key))
		for i, k := range e.Key {
			parts[i] = k.Name + "=" + quotedID(k.Value)
		}
		return fmt.Sprintf("%s (%s) not found (%s)", e.Entity, strings.Join(parts, ", "), e.Capability)
	}
	return fmt.Sprintf("%s %s not found (%s)", e.Entity, quotedID(e.ID), e.Capability)
}

// quotedID writes a key value as the program would: text quoted (and
// clipped), numbers bare.
func quotedID(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", quoted.Clip(s, maxQuotedID))
	}
	return fmt.Sprint(v)
}

// keyParts names the key of a get without a single id: the variables in
// order (the entity's key_vars) that the get was given, or, without an
// order, every scalar argument by name. nil when the get has an id.
func keyParts(args map[string]any, order []string) []KeyPart {
	if args["id"] != nil || len(args) == 0 {
		return nil
	}
	var parts []KeyPart
	for _, name := range order {
		if v, ok := args[name]; ok && v != nil {
			parts = append(parts, KeyPart{Name: name, Value: v})
		}
	}
	if len(parts) > 0 {
		return parts
	}
	names := make([]string, 0, len(args))
	for name, v := range args {
		switch v.(type) {
		case map[string]any, []any, nil:
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		parts = append(parts, KeyPart{Name: name, Value: args[name]})
	}
	return parts
}

// maxQuotedID bounds how much of an id a not-found message quotes: an
// agent recognises its id from the start, and a 60 KB id (programs may
// be 64 KB) would otherwise come back whole in every answer and log line.
const maxQuotedID = 200

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Detail is the backend's own explanation of a BackendError: the text after
// the status line the guest put in front of it, or "".
func (e *BackendError) Detail() string {
	m := e.Message
	if i := strings.Index(m, "backend answered "); i >= 0 {
		m = m[i+len("backend answered "):]
		if j := strings.Index(m, ": "); j >= 0 {
			return m[j+2:]
		}
		return ""
	}
	return m
}

// notFound turns what a get answered into a NotFoundError when it found
// nothing: a 404, or a success without a row (an empty GraphQL node).
// keyOrder names the entity's compound key variables in declaration order
// (see keyParts), or nil.
func notFound(n *plan.Node, t abi.Table, err error, keyOrder []string) error {
	if n.Kind != catalog.KindGet {
		return err
	}
	var be *BackendError
	missing := (err == nil && len(t.Rows) == 0) || (errors.As(err, &be) && be.Status == http.StatusNotFound)
	if missing || (err == nil && len(t.Rows) == 1 && allNil(t.Rows[0])) {
		return &NotFoundError{Entity: n.Entity, ID: n.Args["id"], Key: keyParts(n.Args, keyOrder), Capability: n.Capability}
	}
	return err
}

func allNil(row []any) bool {
	for _, v := range row {
		if v != nil {
			return false
		}
	}
	return true
}

// deleted is the answer of a delete: one row per deleted id, saying so,
// whatever (often nothing) the backend answered.
func deleted(ids []any) abi.Table {
	t := abi.Table{Columns: []string{"id", "deleted"}, Rows: make([][]any, len(ids))}
	for i, id := range ids {
		t.Rows[i] = []any{id, true}
	}
	return t
}

// redactSecret removes the credentials a request carried from the
// backend's error text: a backend that echoes a rejected token must not
// put it in an error a client reads. Both the secret the catalog names and
// sent, the value egress actually sent (the access token fetched for
// oauth2_client_credentials), go, in their plain, query- and path-escaped
// forms; so does the start of one cut off by a truncation (redactCut).
func redactSecret(msg string, creq *abi.CompiledRequest, secrets egress.Secrets, sent string) string {
	if creq == nil || creq.Auth == nil {
		return msg
	}
	var values []string
	if secrets != nil {
		if v, ok := secrets.Secret(creq.Auth.Secret); ok {
			values = append(values, v)
		}
	}
	values = append(values, sent)
	var forms []string
	for _, v := range values {
		if len(v) < minRedacted {
			continue
		}
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v))
	}
	for _, form := range forms {
		msg = strings.ReplaceAll(msg, form, "[redacted]")
	}
	return redactCut(msg, forms)
}

// minRedacted is the shortest secret, and the shortest cut-off start of
// one, redacted: shorter ones would blank ordinary words.
const minRedacted = 4

// truncated is the mark the guest's errorText and messageText put where
// they cut a backend's text at 200 bytes.
const truncated = "…"

// redactCut redacts, before each truncation mark in msg, the longest
// suffix (of at least minRedacted bytes) of the text that is a prefix of
// one of forms: a secret straddling the cut leaves only its start there,
// which an exact replace misses.
func redactCut(msg string, forms []string) string {
	if len(forms) == 0 || !strings.Contains(msg, truncated) {
		return msg
	}
	var b strings.Builder
	for rest := msg; ; {
		i := strings.Index(rest, truncated)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		head, n := rest[:i], 0
		for _, f := range forms {
			for k := min(len(f), len(head)); k >= minRedacted && k > n; k-- {
				if strings.HasSuffix(head, f[:k]) {
					n = k
					break
				}
			}
		}
		if n > 0 {
			head = head[:len(head)-n] + "[redacted]"
		}
		b.WriteString(head)
		b.WriteString(truncated)
		rest = rest[i+len(truncated):]
	}
}

package executor

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	Entity     string
	ID         any
	Capability string
}

func (e *NotFoundError) Error() string {
	id := fmt.Sprint(e.ID)
	if s, ok := e.ID.(string); ok {
		id = fmt.Sprintf("%q", quoted.Clip(s, maxQuotedID))
	}
	return fmt.Sprintf("%s %s not found (%s)", e.Entity, id, e.Capability)
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
func notFound(n *plan.Node, t abi.Table, err error) error {
	if n.Kind != catalog.KindGet {
		return err
	}
	var be *BackendError
	if (err == nil && len(t.Rows) == 0) || (errors.As(err, &be) && be.Status == http.StatusNotFound) {
		return &NotFoundError{Entity: n.Entity, ID: n.Args["id"], Capability: n.Capability}
	}
	if err == nil && len(t.Rows) == 1 && allNil(t.Rows[0]) {
		return &NotFoundError{Entity: n.Entity, ID: n.Args["id"], Capability: n.Capability}
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

// redactSecret removes the credential a request carried from the
// backend's error text: a backend that echoes a rejected token must not
// put it in an error a client reads.
func redactSecret(msg string, creq *abi.CompiledRequest, secrets egress.Secrets) string {
	if creq == nil || creq.Auth == nil || secrets == nil {
		return msg
	}
	v, ok := secrets.Secret(creq.Auth.Secret)
	if !ok || len(v) < 4 {
		return msg
	}
	for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
		msg = strings.ReplaceAll(msg, form, "[redacted]")
	}
	return msg
}

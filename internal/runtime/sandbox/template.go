package sandbox

import (
	"context"
	"errors"
	"sync"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/request"
)

// maxTemplates bounds the templates one tenant's engine keeps (declined
// capabilities included); past it the cache starts over, which costs one
// guest call per capability again, never a wrong request.
const maxTemplates = 4096

// templates caches each capability's request template (see package
// request) by catalog entry, the digest of the catalog load the instances
// hold, and capability name. A nil entry records that the engine declined
// (or does not implement ExportTemplate): those calls compile in the guest.
type templates struct {
	mu sync.Mutex
	m  map[templateKey]*request.Template
}

type templateKey struct{ entry, digest, capability string }

// loadDigest is the digest of the load an instance must hold under key,
// "" when there is none.
func (t *Tenant) loadDigest(key string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loadIndex[key]
}

// template returns the capability's template, asking the guest the first
// time. Only a definite answer is cached: a busy pool or an expired
// deadline says nothing about the capability.
func (e *Engine) template(ctx context.Context, entry, capability string) *request.Template {
	if e.templates == nil {
		return nil
	}
	digest := e.Tenant.loadDigest(entry)
	if digest == "" {
		return nil
	}
	key := templateKey{entry, digest, capability}
	e.templates.mu.Lock()
	t, ok := e.templates.m[key]
	e.templates.mu.Unlock()
	if ok {
		return t
	}
	var ans request.Answer
	err := e.jsonCall(ctx, abi.ExportTemplate, []string{entry}, &abi.TemplateRequest{EntryID: entry, Capability: capability}, &ans)
	var ce *CallError
	switch {
	case err == nil:
	case errors.As(err, &ce) && !errors.Is(ce.Err, ErrABI):
		return nil // busy, deadline, trap: try again on a later call
	default:
		ans.Template = nil // the engine refused or lacks the export
	}
	// Cache only when the catalog did not change while the guest compiled
	// (as for decode specs): the instance may have installed a newer one
	// than digest names.
	if e.Tenant.loadDigest(entry) != digest {
		return ans.Template
	}
	e.templates.mu.Lock()
	if len(e.templates.m) >= maxTemplates {
		clear(e.templates.m)
	}
	e.templates.m[key] = ans.Template
	e.templates.mu.Unlock()
	return ans.Template
}

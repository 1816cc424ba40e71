package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/symbol"
	"github.com/plasmd/plasmd/server/internal/activity"
	"github.com/plasmd/plasmd/server/internal/problem"
	"github.com/plasmd/plasmd/server/internal/session"
	"github.com/plasmd/plasmd/server/internal/teaching"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// Continuity is _meta.plasm.continuity (seed 000 §4).
type Continuity struct {
	StaleBindingRecovered bool             `json:"stale_binding_recovered"`
	NewSymbolSpace        bool             `json:"new_symbol_space"`
	PreviousExecute       *session.Binding `json:"previous_execute,omitempty"`
}

// ContextResult is the outcome of plasm_context.
type ContextResult struct {
	Ref        string
	LogicalID  string
	Text       string
	Execute    session.Execute
	Continuity Continuity
	Wave       teaching.WaveKind
}

// Opened is the outcome of opening an execute session.
type Opened struct {
	Execute session.Execute
	// Text is the full teaching text (fenced) for a new session.
	Text   string
	Reused bool
}

// Extended is the outcome of an expand / federate.
type Extended struct {
	Execute   session.Execute
	Text      string
	Unchanged bool
	Kind      teaching.WaveKind
}

// unchangedLine is the single line answered when nothing new is exposed
// (seed 000): no teaching table replay.
func unchangedLine(m *symbol.Map) string {
	n := len(m.Entities)
	if n == 0 {
		return "_Session unchanged. Use `plasm` / `plasm_run` with this logical_session_ref._"
	}
	return fmt.Sprintf("_Session unchanged (`e1`…`e%d`). Use `plasm` / `plasm_run` with this logical_session_ref._", n)
}

const staleNotice = "> **Session replaced.** The previous execute session for this intent expired or is gone. " +
	"All earlier `e#`/`m#`/`p#`/`r#` symbols from this conversation are void: use only the table below.\n\n"

// Context implements plasm_context: (tenant, intent) → logical session and
// its ref on this transport, then a first open, an expand / federate of the
// bound execute session, or one unchanged line.
func (s *Service) Context(ctx context.Context, t *tenant.Tenant, transport, intent string, seeds []Seed, ranked []string) (*ContextResult, error) {
	if err := CheckIntent(intent); err != nil {
		return nil, err
	}
	rs, err := s.resolveSeeds(t, seeds)
	if err != nil {
		return nil, err
	}
	l, err := s.store.OpenLogical(ctx, t.ID, logicalIntent(t, intent))
	if err != nil {
		return nil, err
	}
	ref, err := s.store.RefFor(ctx, transport, t.ID, l.ID)
	if err != nil {
		return nil, err
	}
	unlock := s.logicalLocks.lock(l.ID)
	defer unlock()
	// Re-read under the lock: another call may have bound it meanwhile.
	if l, err = s.store.GetLogical(ctx, t.ID, l.ID); err != nil {
		return nil, err
	}
	out := &ContextResult{Ref: ref, LogicalID: l.ID}
	if l.Binding != nil {
		// The execute row can also be extended over HTTP, which takes only
		// its execute lock; take it too (order: logical → execute).
		unlockEx := s.executeLocks.lock(l.Binding.SessionID)
		defer unlockEx()
		ex, err := s.store.GetExecute(ctx, t.ID, l.Binding.PromptHash, l.Binding.SessionID)
		switch {
		case err == nil:
			ext, err := s.extendLocked(ctx, t, ex, rs, intent, ranked)
			if err != nil {
				return nil, err
			}
			out.Execute, out.Wave = ext.Execute, ext.Kind
			if ext.Unchanged {
				out.Text = unchangedAnswer(ref, ext.Text)
			} else {
				out.Text = "`" + ref + "`\n\n" + ext.Text
			}
			return out, nil
		case errors.Is(err, session.ErrExpired), errors.Is(err, session.ErrNotFound):
			prev := *l.Binding
			out.Continuity.StaleBindingRecovered = true
			out.Continuity.PreviousExecute = &prev
		default:
			return nil, err
		}
	}
	op, err := s.open(ctx, t, rs, intent, ranked, l.ID)
	if err != nil {
		return nil, err
	}
	if err := s.store.BindLogical(ctx, t.ID, l.ID, op.Execute.Key()); err != nil {
		return nil, err
	}
	out.Execute = op.Execute
	if op.Reused {
		out.Text = unchangedAnswer(ref, unchangedLine(&op.Execute.Symbols))
		return out, nil
	}
	out.Continuity.NewSymbolSpace = true
	out.Wave = teaching.First
	notice := ""
	if out.Continuity.StaleBindingRecovered {
		notice = staleNotice
	}
	out.Text = "`" + ref + "`\n\n" + notice + op.Text
	return out, nil
}

// OpenExecute opens an execute session (HTTP POST /execute), reusing a live
// one with the same SessionReuseKey.
func (s *Service) OpenExecute(ctx context.Context, t *tenant.Tenant, seeds []Seed, intent string, ranked []string, logicalID string) (*Opened, error) {
	if err := CheckIntent(intent); err != nil {
		return nil, err
	}
	rs, err := s.resolveSeeds(t, seeds)
	if err != nil {
		return nil, err
	}
	return s.open(ctx, t, rs, intent, ranked, logicalID)
}

func (s *Service) open(ctx context.Context, t *tenant.Tenant, rs []resolvedSeed, intent string, ranked []string, logicalID string) (*Opened, error) {
	key := reuseKey(t.ID, t.Principal, rs, openScope(logicalID, intent, ranked))
	unlock := s.reuseLocks.lock(key)
	defer unlock()
	if ex, err := s.store.FindReusable(ctx, t.ID, key); err == nil {
		return &Opened{Execute: ex, Reused: true}, nil
	}
	cats := s.catalogMap(t)
	// The primary catalog teaches first; other catalogs in the seed set are
	// federated after it in lexicographic order, so seed order never
	// changes symbol numbering.
	byEntry, entries := groupSeeds(rs)
	slices.Sort(entries)
	var m symbol.Map
	var exp teaching.Exposure
	var text strings.Builder
	for i, id := range entries {
		w, err := teaching.Expose(&m, exp, teaching.Request{Catalogs: cats, Seeds: byEntry[id], Intent: intent, Ranked: ranked})
		if err != nil {
			return nil, teachingError(err)
		}
		exp = w.Exposure
		if i == 0 {
			text.WriteString(teaching.RenderFirst(&m, w))
		} else {
			text.WriteString(teaching.RenderDelta(&m, w))
		}
	}
	prompt := "```tsv\n" + text.String() + "```\n"
	sum := sha256.Sum256([]byte(prompt))
	// LastUsed stays zero: the store stamps it with its own clock, the one
	// its idle TTL is measured by.
	ex := session.Execute{
		Tenant: t.ID, Principal: t.Principal, PromptHash: hex.EncodeToString(sum[:8]), ID: uuid.NewString(), LogicalID: logicalID,
		ReuseKey: key, Entries: exp.Entries(), Digests: digests(cats, exp.Entries()),
		Symbols: m, Exposure: exp, Prompt: prompt, DomainRevision: 1, Created: time.Now().UTC(),
	}
	if err := s.store.PutExecute(ctx, ex); err != nil {
		return nil, err
	}
	if s.journal != nil {
		// The console lists sessions before their first run too.
		s.journal.AddSession(activity.Session{Tenant: t.ID, LogicalID: logicalID, Intent: intent,
			PromptHash: ex.PromptHash, SessionID: ex.ID, Opened: ex.Created})
	}
	return &Opened{Execute: ex, Text: prompt}, nil
}

// Extend expands or federates a live execute session with more seeds
// (HTTP POST /execute/{ph}/{s}/context).
func (s *Service) Extend(ctx context.Context, t *tenant.Tenant, ex session.Execute, seeds []Seed, intent string, ranked []string) (*Extended, error) {
	if err := CheckIntent(intent); err != nil {
		return nil, err
	}
	rs, err := s.resolveSeeds(t, seeds)
	if err != nil {
		return nil, err
	}
	unlock := s.executeLocks.lock(ex.ID)
	defer unlock()
	// Re-read under the lock so concurrent waves append, never overwrite.
	if ex, err = s.store.GetExecute(ctx, t.ID, ex.PromptHash, ex.ID); err != nil {
		return nil, err
	}
	return s.extendLocked(ctx, t, ex, rs, intent, ranked)
}

func (s *Service) extendLocked(ctx context.Context, t *tenant.Tenant, ex session.Execute, rs []resolvedSeed, intent string, ranked []string) (*Extended, error) {
	cats := s.catalogMap(t)
	byEntry, entries := groupSeeds(rs)
	// Loaded catalogs expand first, then new ones federate in
	// lexicographic order.
	slices.SortFunc(entries, func(a, b string) int {
		la, lb := slices.Contains(ex.Entries, a), slices.Contains(ex.Entries, b)
		if la != lb {
			if la {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	m := ex.Symbols.Clone()
	exp := ex.Exposure.Clone()
	var text strings.Builder
	kind := teaching.Unchanged
	for _, id := range entries {
		w, err := teaching.Expose(m, exp, teaching.Request{Catalogs: cats, Seeds: byEntry[id], Intent: intent, Ranked: ranked})
		if err != nil {
			return nil, teachingError(err)
		}
		exp = w.Exposure
		if !w.Empty() {
			text.WriteString(teaching.RenderDelta(m, w))
			if kind == teaching.Unchanged || w.Kind == teaching.Federate {
				kind = w.Kind
			}
		}
	}
	if kind == teaching.Unchanged {
		return &Extended{Execute: ex, Text: unchangedLine(&ex.Symbols), Unchanged: true}, nil
	}
	delta := "```tsv\n" + text.String() + "```\n"
	ex.Symbols = *m
	ex.Exposure = exp
	ex.Entries = exp.Entries()
	ex.Digests = digests(cats, ex.Entries)
	ex.DomainRevision++
	ex.Prompt += "\n## Expanded capabilities (revision " + fmt.Sprint(ex.DomainRevision) + ")\n" + delta
	if err := s.store.PutExecute(ctx, ex); err != nil {
		return nil, err
	}
	return &Extended{Execute: ex, Text: delta, Kind: kind}, nil
}

func (s *Service) catalogMap(t *tenant.Tenant) map[string]*catalog.Catalog {
	out := map[string]*catalog.Catalog{}
	for _, c := range s.registry.Visible(t.Allows) {
		out[c.EntryID] = c
	}
	return out
}

func digests(cats map[string]*catalog.Catalog, entries []string) map[string]string {
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if c := cats[e]; c != nil {
			out[e] = c.Digest
		}
	}
	return out
}

func teachingError(err error) error {
	var se *teaching.SeedError
	if errors.As(err, &se) {
		return problem.NotFound("seed %s:%s: %v", se.Seed.EntryID, se.Seed.Entity, se.Err)
	}
	return fmt.Errorf("teaching: %w", err)
}

// groupSeeds splits seeds by catalog, listing catalogs in first-seen order.
func groupSeeds(rs []resolvedSeed) (map[string][]teaching.Seed, []string) {
	byEntry := map[string][]teaching.Seed{}
	var entries []string
	for _, sd := range rs {
		id := sd.cat.EntryID
		if _, ok := byEntry[id]; !ok {
			entries = append(entries, id)
		}
		byEntry[id] = append(byEntry[id], teaching.Seed{EntryID: id, Entity: sd.entity})
	}
	return byEntry, entries
}

// logicalIntent keys a logical session: the intent, qualified by the
// principal when auth is delegated, so two people using the same intent
// string get separate logical sessions (and so separate refs and symbols).
func logicalIntent(t *tenant.Tenant, intent string) string {
	if t.Principal == "" {
		return intent
	}
	return t.Principal + "\x00" + intent
}

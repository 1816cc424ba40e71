// Package discovery ranks catalog entities for an intent sentence: it backs
// the discover_capabilities tool and POST /v1/discover.
//
// Each (entry_id, entity) is one document made of the entity's name, its
// description, its field names, the names, labels and descriptions of its
// capabilities, its relation names and the catalog's id and aliases. The
// intent is scored against every document with Okapi BM25 (k1 = 1.2,
// b = 0.75); words are compared after teaching.Words, the same
// normalisation that gates intent-scoped exposure, so an entity found here
// tends to teach the mutators the intent asked for.
package discovery

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/server/internal/teaching"
)

// BM25 parameters: the customary defaults, which suit short documents like
// these (a few dozen words each).
const (
	k1 = 1.2
	b  = 0.75
)

// DefaultMax is the number of options returned when the caller sets none.
const DefaultMax = 10

// maxQueryTerms bounds the distinct intent words scored; an intent is one
// sentence, and the bound keeps a pasted document from costing O(words ×
// entities).
const maxQueryTerms = 64

// maxDescription bounds an option's description, in runes.
const maxDescription = 200

// Option is one ranked entity.
type Option struct {
	EntryID     string  `json:"api"`
	Entity      string  `json:"entity"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
}

type document struct {
	entry, entity, description string
	tf                         map[string]int
	length                     int
}

// Rank scores every non-abstract entity of the catalogs whose entry id is
// in allowed (all catalogs when allowed is empty) against intent, and
// returns at most max options (DefaultMax when max <= 0), best first. Ties
// are broken by (entry_id, entity) so the output is deterministic.
// Entities that share no word with the intent are omitted; when none does,
// the result is empty and the caller should say that nothing matched.
func Rank(catalogs []*catalog.Catalog, intent string, max int, allowed []string) []Option {
	if max <= 0 {
		max = DefaultMax
	}
	query := queryTerms(intent)
	if len(query) == 0 {
		return nil
	}
	docs := documents(catalogs, allowed)
	if len(docs) == 0 {
		return nil
	}

	total := 0
	df := map[string]int{}
	for _, d := range docs {
		total += d.length
		for _, t := range query {
			if d.tf[t] > 0 {
				df[t]++
			}
		}
	}
	avgdl := float64(total) / float64(len(docs))
	if avgdl == 0 {
		avgdl = 1
	}
	n := float64(len(docs))

	var out []Option
	for _, d := range docs {
		score := 0.0
		for _, t := range query {
			tf := float64(d.tf[t])
			if tf == 0 {
				continue
			}
			// The "+1" form of IDF stays positive even for a word in
			// every document, so a common word can still rank.
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			score += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(d.length)/avgdl))
		}
		if score > 0 {
			out = append(out, Option{EntryID: d.entry, Entity: d.entity, Description: d.description, Score: score})
		}
	}
	slices.SortFunc(out, func(x, y Option) int {
		return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(x.EntryID, y.EntryID), cmp.Compare(x.Entity, y.Entity))
	})
	if len(out) > max {
		out = out[:max]
	}
	return out
}

func queryTerms(intent string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, w := range teaching.Words(intent) {
		if !seen[w] {
			seen[w] = true
			terms = append(terms, w)
			if len(terms) == maxQueryTerms {
				break
			}
		}
	}
	return terms
}

// documents builds one document per entity, in (entry_id, entity) order so
// that floating-point sums, and therefore ties, never depend on input order.
// A catalog listed twice counts once (the first wins).
func documents(catalogs []*catalog.Catalog, allowed []string) []document {
	byEntry := map[string]*catalog.Catalog{}
	var entries []string
	for _, c := range catalogs {
		if c == nil || byEntry[c.EntryID] != nil {
			continue
		}
		if len(allowed) > 0 && !slices.Contains(allowed, c.EntryID) {
			continue
		}
		byEntry[c.EntryID] = c
		entries = append(entries, c.EntryID)
	}
	slices.Sort(entries)
	var docs []document
	for _, id := range entries {
		c := byEntry[id]
		names := make([]string, 0, len(c.Entities))
		for name, e := range c.Entities {
			if e != nil && !e.Abstract {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			docs = append(docs, entityDocument(c, c.Entities[name]))
		}
	}
	return docs
}

func entityDocument(c *catalog.Catalog, e *catalog.Entity) document {
	d := document{entry: c.EntryID, entity: e.Name, tf: map[string]int{}}
	add := func(text string) {
		for _, w := range teaching.Words(text) {
			d.tf[w]++
			d.length++
		}
	}
	add(e.Name)
	add(e.Description)
	add(c.EntryID)
	for _, a := range c.RegistryAliases {
		add(a)
	}
	for name := range e.Fields {
		add(name)
	}
	for name := range e.Relations {
		add(name)
	}
	for _, cp := range c.CapabilitiesOf(e.Name) {
		add(cp.Name)
		add(catalog.MethodLabel(cp))
		add(cp.Description)
	}
	desc := e.Description
	if strings.TrimSpace(desc) == "" {
		desc = c.Description
	}
	d.description = clip(desc)
	return d
}

// clip makes a description fit one TSV cell.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxDescription {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:maxDescription]), " ") + "…"
}

// RenderTSV renders options as the discover_capabilities answer: a fenced
// TSV block with the header "api, entity, description", best first. Agents
// copy the api and entity columns into plasm_context seeds.
func RenderTSV(opts []Option) string {
	var sb strings.Builder
	sb.WriteString("```tsv\napi\tentity\tdescription\n")
	for _, o := range opts {
		sb.WriteString(cell(o.EntryID))
		sb.WriteByte('\t')
		sb.WriteString(cell(o.Entity))
		sb.WriteByte('\t')
		sb.WriteString(cell(o.Description))
		sb.WriteByte('\n')
	}
	sb.WriteString("```\n")
	return sb.String()
}

// cell keeps a value on one line without tabs, and keeps a stray fence from
// closing the block early.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "```", "'''")
}

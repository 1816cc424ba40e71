package catalogdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits that keep hostile catalogs from exhausting the host.
const (
	// MaxFileSize is the largest source file the loader reads.
	MaxFileSize = 4 << 20
	// maxNodes bounds the YAML nodes of one file (a 4 MiB flow list could
	// otherwise hold about two million of them).
	maxNodes = 500_000
	// maxExprDepth bounds the nesting of CML expressions.
	maxExprDepth = 32
	// maxValueDepth bounds the nesting of literal values (const, fixed, eq).
	maxValueDepth = 64
	// maxErrors caps the problems reported for one catalog; past that the
	// rest are mostly consequences of the first ones.
	maxErrors = 200
	// maxSuggest bounds the names compared for a "did you mean" hint.
	maxSuggest = 1000
	// maxMsg bounds the length of one problem's message.
	maxMsg = 1000
)

// parser reports problems in one source file.
type parser struct {
	l    *loader
	file string // display name used in errors
	// builtin is set to a Plasm CML built-in met while reading one
	// mapping, so the mapping's capability can be marked unavailable.
	builtin string
	// warnedAt holds nodes already warned about, so a block shared by YAML
	// aliases is reported once.
	warnedAt map[*yaml.Node]bool
	// While holding (a mapping is read), held keeps its bound problems
	// until the mapping is known to be kept (bounds.go).
	holding bool
	held    []heldBound
}

// warnf records a problem that does not stop the catalog from loading: a
// form Plasm tolerates although the catalog is wrong (a stray key, a
// duplicate key). Warnings are capped like errors.
func (p *parser) warnf(n *yaml.Node, format string, args ...any) {
	if len(p.l.warns) >= maxErrors {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if len(msg) > maxMsg {
		msg = strings.ToValidUTF8(msg[:maxMsg], "") + "…"
	}
	e := &Error{File: p.file, Msg: msg}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	p.l.warns = append(p.l.warns, e)
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	if p.l.full() {
		p.l.dropped++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if len(msg) > maxMsg {
		// Names come from the file; a hostile one must not make every
		// message that quotes it megabytes long.
		msg = strings.ToValidUTF8(msg[:maxMsg], "") + "…"
	}
	e := &Error{File: p.file, Msg: msg}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	p.l.errs = append(p.l.errs, e)
}

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML decodes one YAML document into a node tree. It returns nil for an
// empty file. Anchors, aliases and merge keys are expanded (Plasm's catalogs
// share pagination blocks that way) under a hard bound on the expanded size,
// so a "billion laughs" document is refused before anything is expanded.
func (p *parser) parseYAML(data []byte) (root *yaml.Node, ok bool) {
	if len(data) > MaxFileSize {
		p.errorf(nil, "file is larger than the %d-byte (4 MiB) limit", MaxFileSize)
		return nil, false
	}
	var doc, extra yaml.Node
	err := func() (err error) {
		// The YAML library converts its own failures into errors; this
		// guards the host against any other panic on hostile input.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("yaml: parser failure: %v", r)
			}
		}()
		dec := yaml.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&doc); err != nil {
			return err
		}
		if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
			if err != nil {
				return err
			}
			return errExtraDocument
		}
		return nil
	}()
	switch {
	case errors.Is(err, io.EOF):
		return nil, true
	case errors.Is(err, errExtraDocument):
		p.errorf(&extra, "a catalog file holds one YAML document; found another here")
		return nil, false
	case err != nil:
		msg := err.Error()
		if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			p.errorf(&yaml.Node{Line: line}, "invalid YAML: %s", m[2])
		} else if line, col, what, found := firstBadChar(data); found {
			// The reader's failures (bad encoding, control characters)
			// come without a position; find the character it refused.
			p.errorf(&yaml.Node{Line: line, Column: col}, "invalid YAML: %s", what)
		} else {
			p.errorf(nil, "invalid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
		}
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, true
	}
	root = doc.Content[0]
	if !p.checkTree(root) || !p.expandAliases(root) {
		return nil, false
	}
	return root, true
}

var errExtraDocument = errors.New("extra YAML document")

// checkTree rejects oversized trees before alias expansion and the
// structured walk, iteratively so that depth cannot exhaust the stack.
func (p *parser) checkTree(root *yaml.Node) bool {
	count := 0
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		count++
		if count > maxNodes {
			p.errorf(root, "document has more than %d YAML nodes", maxNodes)
			return false
		}
		for i := len(n.Content) - 1; i >= 0; i-- {
			stack = append(stack, n.Content[i])
		}
	}
	return true
}

// describe names what a node holds, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return strconv.Quote(v)
	}
	return "an unsupported YAML node"
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// label names a context in messages; the document root has no path.
func label(ctx string) string {
	if ctx == "" {
		return "top level"
	}
	return ctx
}

func join(ctx, key string) string {
	if ctx == "" {
		return key
	}
	return ctx + "." + key
}

func index(ctx string, i int) string { return fmt.Sprintf("%s[%d]", ctx, i) }

// entry is one key of a YAML mapping.
type entry struct {
	key, val *yaml.Node
}

// pairs returns the entries of a mapping in document order, reporting
// non-string and duplicate keys. It reports and returns nil when n is not a
// mapping.
func (p *parser) pairs(ctx string, n *yaml.Node) ([]entry, bool) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: expected a mapping, got %s", label(ctx), describe(n))
		return nil, false
	}
	out := make([]entry, 0, len(n.Content)/2)
	seen := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || isNull(k) {
			p.errorf(k, "%s: keys must be strings, got %s", label(ctx), describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			// Plasm's YAML maps keep the later value; so does plasmd, but
			// says so, since one of the two is surely a mistake.
			p.warnf(k, "%s: duplicate key %q (first at line %d); the later value is used", label(ctx), k.Value, first.Line)
			for i := range out {
				if out[i].key.Value == k.Value {
					out[i] = entry{k, v}
				}
			}
			seen[k.Value] = k
			continue
		}
		seen[k.Value] = k
		out = append(out, entry{k, v})
	}
	return out, true
}

// object is a mapping with a fixed set of keys.
type object struct {
	p   *parser
	ctx string
	at  *yaml.Node // where "missing key" problems are reported
	m   map[string]entry
	ord []entry
	// strict makes every unknown key an error (CML expressions, whose
	// keys decide what is sent).
	strict bool
}

// object reads n as a mapping whose keys must be among allowed (nil allows
// any; call check later). at locates problems about the mapping as a whole
// (usually its key in the parent); nil means n itself.
func (p *parser) object(ctx string, at, n *yaml.Node, allowed []string) *object {
	if at == nil {
		at = n
	}
	es, ok := p.pairs(ctx, n)
	if !ok {
		return nil
	}
	o := &object{p: p, ctx: ctx, at: at, m: make(map[string]entry, len(es)), ord: es}
	for _, e := range es {
		o.m[e.key.Value] = e
	}
	if allowed != nil {
		o.check(allowed, "")
	}
	return o
}

// check reports keys outside allowed; what qualifies the message (e.g.
// "for type select").
func (o *object) check(allowed []string, what string) {
	if what != "" {
		what = " " + what
	}
	for _, e := range o.ord {
		if contains(allowed, e.key.Value) {
			continue
		}
		// A near miss of a known key is a typo whose value would be lost
		// silently: an error. Any other key is one Plasm ignores too (a
		// stray note such as last_page under response): a warning.
		if hint := o.p.suggest(e.key.Value, allowed); hint != "" {
			o.p.errorf(e.key, "%s: unknown key %q%s%s", label(o.ctx), e.key.Value, what, hint)
			continue
		}
		if o.strict {
			o.p.errorf(e.key, "%s: unknown key %q%s (expected one of: %s)", label(o.ctx), e.key.Value, what, strings.Join(allowed, ", "))
			continue
		}
		o.p.warnf(e.key, "%s: unknown key %q%s is ignored (expected one of: %s)", label(o.ctx), e.key.Value, what, strings.Join(allowed, ", "))
	}
}

func (o *object) has(k string) bool { _, ok := o.m[k]; return ok }

// val returns the value node of k, or nil.
func (o *object) val(k string) *yaml.Node { return o.m[k].val }

// key returns the key node of k, or nil.
func (o *object) key(k string) *yaml.Node { return o.m[k].key }

func (o *object) sub(k string) string { return join(o.ctx, k) }

func (o *object) missing(k string) {
	o.p.errorf(o.at, "%s: missing required key %q", label(o.ctx), k)
}

// missingFor reports a key that is required in this case, saying why.
func (o *object) missingFor(k, why string) {
	o.p.errorf(o.at, "%s: missing required key %q (%s)", label(o.ctx), k, why)
}

// str reads an optional string.
func (o *object) str(k string) string {
	v := o.val(k)
	if v == nil {
		return ""
	}
	s, _ := o.p.str(o.sub(k), v)
	return s
}

// name reads a required non-empty string.
func (o *object) name(k string) string {
	v := o.val(k)
	if v == nil {
		o.missing(k)
		return ""
	}
	return o.p.name(o.sub(k), v)
}

// optName reads an optional string that must not be empty when present.
func (o *object) optName(k string) string {
	v := o.val(k)
	if v == nil {
		return ""
	}
	return o.p.name(o.sub(k), v)
}

func (o *object) boolean(k string) bool {
	v := o.val(k)
	if v == nil {
		return false
	}
	return o.p.boolean(o.sub(k), v)
}

func (o *object) strList(k string) []string {
	v := o.val(k)
	if v == nil {
		return nil
	}
	return o.p.strList(o.sub(k), v)
}

// oneOf reads a required string that must be one of allowed.
func (o *object) oneOf(k string, allowed []string) string {
	v := o.val(k)
	if v == nil {
		o.missing(k)
		return ""
	}
	return o.p.oneOf(o.sub(k), v, allowed)
}

// optOneOf reads an optional string that must be one of allowed when present.
func (o *object) optOneOf(k string, allowed []string) string {
	v := o.val(k)
	if v == nil {
		return ""
	}
	return o.p.oneOf(o.sub(k), v, allowed)
}

// str reads any non-null scalar as a string: catalogs legitimately write
// numbers where strings are meant (allowed_values: [1, 2]).
func (p *parser) str(ctx string, n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		p.errorf(n, "%s: expected a string, got %s", ctx, describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) name(ctx string, n *yaml.Node) string {
	s, ok := p.str(ctx, n)
	if ok && s == "" {
		p.errorf(n, "%s: must not be empty", ctx)
	}
	return s
}

func (p *parser) oneOf(ctx string, n *yaml.Node, allowed []string) string {
	s, ok := p.str(ctx, n)
	if !ok {
		return ""
	}
	if !contains(allowed, s) {
		p.errorf(n, "%s: %q is not one of %s%s", ctx, s, strings.Join(allowed, ", "), p.suggest(s, allowed))
		return ""
	}
	return s
}

func (p *parser) boolean(ctx string, n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		p.errorf(n, "%s: expected true or false, got %s", ctx, describe(n))
		return false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		p.errorf(n, "%s: expected true or false, got %s", ctx, describe(n))
	}
	return b
}

func (p *parser) integer(ctx string, n *yaml.Node) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		p.errorf(n, "%s: expected an integer, got %s", ctx, describe(n))
		return 0, false
	}
	var i int64
	if err := n.Decode(&i); err != nil {
		p.errorf(n, "%s: integer %s is out of range", ctx, n.Value)
		return 0, false
	}
	return i, true
}

// strList reads a list of non-empty strings.
func (p *parser) strList(ctx string, n *yaml.Node) []string {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of strings, got %s", ctx, describe(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		if s := p.name(index(ctx, i), c); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// uniqueList reads a list of non-empty strings and reports duplicates.
func (p *parser) uniqueList(ctx string, n *yaml.Node) []string {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of strings, got %s", ctx, describe(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	seen := make(map[string]bool, len(n.Content))
	for i, c := range n.Content {
		s := p.name(index(ctx, i), c)
		if s == "" {
			continue
		}
		if seen[s] {
			p.errorf(c, "%s: duplicate %q", index(ctx, i), s)
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// literal converts a YAML value into plain Go data as encoding/json would
// produce it, except that integral numbers become int64.
func (p *parser) literal(ctx string, n *yaml.Node, depth int) (any, bool) {
	if depth > maxValueDepth {
		p.errorf(n, "%s: value nested deeper than %d levels", ctx, maxValueDepth)
		return nil, false
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, true
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				p.errorf(n, "%s: invalid boolean %s", ctx, describe(n))
				return nil, false
			}
			return b, true
		case "!!int":
			var i int64
			if err := n.Decode(&i); err == nil {
				return i, true
			}
			var f float64
			if err := n.Decode(&f); err != nil {
				p.errorf(n, "%s: invalid integer %s", ctx, describe(n))
				return nil, false
			}
			return f, true
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				p.errorf(n, "%s: invalid number %s", ctx, describe(n))
				return nil, false
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				p.errorf(n, "%s: %s is not a finite number (JSON cannot carry it)", ctx, describe(n))
				return nil, false
			}
			if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return int64(f), true
			}
			return f, true
		default:
			return n.Value, true
		}
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, good := p.literal(index(ctx, i), c, depth+1)
			ok = ok && good
			out = append(out, v)
		}
		return out, ok
	case yaml.MappingNode:
		es, ok := p.pairs(ctx, n)
		if !ok {
			return nil, false
		}
		out := make(map[string]any, len(es))
		for _, e := range es {
			v, good := p.literal(join(ctx, e.key.Value), e.val, depth+1)
			ok = ok && good
			out[e.key.Value] = v
		}
		return out, ok
	}
	p.errorf(n, "%s: unsupported YAML value %s", ctx, describe(n))
	return nil, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest is the package suggest, skipped once problems are no longer
// recorded so that hostile input cannot make the loader quadratic.
func (p *parser) suggest(s string, candidates []string) string {
	if p.l.full() {
		return ""
	}
	return suggest(s, candidates)
}

// unknownRefOf is the package unknownRefOf, cheap once problems are no
// longer recorded.
func (p *parser) unknownRefOf(what, name, owner string, declared []string) string {
	if p.l.full() {
		return ""
	}
	return unknownRefOf(what, name, owner, declared)
}

// suggest returns ` (did you mean "x"?)` when a candidate is a plausible
// misspelling of s, else "".
func suggest(s string, candidates []string) string {
	if len(candidates) > maxSuggest {
		return ""
	}
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(1, len(s)/4) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// unknownRef phrases a dangling reference: a suggestion when one is close,
// else a short list of what exists.
func unknownRef(what, s string, declared []string) string {
	return unknownRefOf(what, s, "", declared)
}

// unknownRefOf is unknownRef for a name scoped to owner ("parameter "x" of y").
func unknownRefOf(what, name, owner string, declared []string) string {
	subject := strconv.Quote(name)
	if owner != "" {
		subject += " of " + owner
	}
	if hint := suggest(name, declared); hint != "" {
		return fmt.Sprintf("unknown %s %s%s", what, subject, hint)
	}
	if len(declared) == 0 {
		return fmt.Sprintf("unknown %s %s (none declared)", what, subject)
	}
	first := smallest(declared, 8)
	more := ""
	if len(declared) > len(first) {
		more = ", …"
	}
	return fmt.Sprintf("unknown %s %s (declared: %s%s)", what, subject, strings.Join(first, ", "), more)
}

// smallest returns the k alphabetically first names, sorted, in one pass
// rather than sorting a possibly huge list for every problem.
func smallest(names []string, k int) []string {
	out := make([]string, 0, k+1)
	for _, n := range names {
		if len(out) == k && n >= out[k-1] {
			continue
		}
		i := sort.SearchStrings(out, n)
		out = append(out, "")
		copy(out[i+1:], out[i:])
		out[i] = n
		if len(out) > k {
			out = out[:k]
		}
	}
	return out
}

// editDistance is the optimal-string-alignment distance (Levenshtein plus
// adjacent transpositions, the commonest typo). Names longer than 64 bytes
// are not compared, which bounds the cost on hostile input.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

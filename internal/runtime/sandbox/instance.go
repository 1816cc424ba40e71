package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/plasmd/plasmd/guest/abi"
)

// minInputBuffer is the smallest input buffer the host asks a guest for, so
// that a stream of small requests settles on one plasm_alloc call.
const minInputBuffer = 64 << 10

// instance is one initialised module instance. It is owned by exactly one
// tenant and used by one call at a time; nothing in it is locked.
type instance struct {
	mod    api.Module
	mem    api.Memory
	memory *ceilingMemory
	log    *guestLog
	fns    map[string]api.Function
	stack  [1]uint64

	// bufPtr/bufCap describe the guest's plasm_alloc buffer, reused until a
	// request outgrows it.
	bufPtr, bufCap uint32

	// gen is the tenant generation (module + limits) the instance was made
	// for; loadGen and loaded track which loads it holds.
	gen     uint64
	loadGen uint64
	loaded  map[string]string // load key → digest of what was applied

	// lastUsed is the host tick of the instance's last release, for
	// least-recently-used eviction under the global cap.
	lastUsed uint64
}

// failure is why a guest call did not produce an envelope. discard says the
// instance can no longer be trusted.
type failure struct {
	kind    error
	detail  string
	discard bool
}

func (f *failure) Error() string { return fmt.Sprintf("%v: %s", f.kind, f.detail) }

// Unwrap lets callers of Host.Module, which wraps failures, branch on the
// kind (ErrDeadline, ErrTrap, ...) with errors.Is.
func (f *failure) Unwrap() error { return f.kind }

// function returns the cached api.Function of an export; wazero builds a
// new call engine on every ExportedFunction lookup, so lookups are kept off
// the warm path.
func (in *instance) function(name string) api.Function {
	if fn, ok := in.fns[name]; ok {
		return fn
	}
	fn := in.mod.ExportedFunction(name)
	if fn != nil {
		in.fns[name] = fn
	}
	return fn
}

// invoke writes head and body back to back into the guest's input buffer,
// calls export, and returns the status byte and a view of the response that
// stays valid until the next call into the instance.
func (in *instance) invoke(ctx context.Context, export string, head, body []byte, lim Limits) (byte, []byte, *failure) {
	fn := in.function(export)
	if fn == nil {
		return 0, nil, &failure{kind: ErrABI, detail: "module does not export " + export}
	}
	total := uint64(len(head)) + uint64(len(body))
	if total > math.MaxUint32 {
		return 0, nil, &failure{kind: ErrInputTooLarge, detail: fmt.Sprintf("%d bytes do not fit a wasm32 guest", total)}
	}
	callCtx, cancel := context.WithTimeout(ctx, lim.CallTimeout)
	defer cancel()
	in.log.reset()
	in.memory.hit.Store(false)

	if total > uint64(in.bufCap) {
		if f := in.grow(callCtx, total); f != nil {
			return 0, nil, f
		}
	}
	if len(head) > 0 && !in.mem.Write(in.bufPtr, head) {
		return 0, nil, &failure{kind: ErrABI, detail: "input buffer outside guest memory", discard: true}
	}
	if len(body) > 0 && !in.mem.Write(in.bufPtr+uint32(len(head)), body) {
		return 0, nil, &failure{kind: ErrABI, detail: "input buffer outside guest memory", discard: true}
	}

	in.stack[0] = total
	if err := fn.CallWithStack(callCtx, in.stack[:]); err != nil {
		return 0, nil, in.classify(callCtx, export, err)
	}
	// A call that returns after its context ended fails too, valid result
	// or not: wazero's CloseOnContextDone watcher may already have decided
	// to close the module and does so asynchronously, so the instance must
	// not go back to the pool, where its next call would fail as if it had
	// overrun. A context still live on return means the watcher was
	// stopped first and the module stays open.
	if err := callCtx.Err(); err != nil {
		return 0, nil, in.classify(callCtx, export, err)
	}
	ptr, n := abi.UnpackResult(in.stack[0])
	if uint64(ptr)+uint64(n) > uint64(in.mem.Size()) {
		return 0, nil, &failure{kind: ErrABI, discard: true,
			detail: fmt.Sprintf("%s returned ptr=%#x len=%d outside memory of %d bytes", export, ptr, n, in.mem.Size())}
	}
	if n == 0 {
		return 0, nil, &failure{kind: ErrABI, detail: export + " returned an empty output (no status byte)", discard: true}
	}
	if uint64(n) > uint64(lim.MaxOutput) {
		return 0, nil, &failure{kind: ErrOutputTooLarge, discard: true,
			detail: fmt.Sprintf("%s returned %d bytes, limit %d", export, n, lim.MaxOutput)}
	}
	out, _ := in.mem.Read(ptr, n)
	return out[0], out[1:], nil
}

// grow asks the guest for an input buffer of at least size bytes, rounding
// up so that slowly growing requests do not call plasm_alloc every time.
func (in *instance) grow(ctx context.Context, size uint64) *failure {
	// Powers of two keep the number of reallocations logarithmic.
	want := uint64(minInputBuffer)
	for want < size {
		want <<= 1
	}
	if want > math.MaxUint32 {
		want = size
	}
	fn := in.function(abi.ExportAlloc)
	in.stack[0] = want
	if err := fn.CallWithStack(ctx, in.stack[:]); err != nil {
		return in.classify(ctx, abi.ExportAlloc, err)
	}
	// See invoke: the module may be closing behind our back.
	if err := ctx.Err(); err != nil {
		return in.classify(ctx, abi.ExportAlloc, err)
	}
	ptr := uint32(in.stack[0])
	if uint64(ptr)+want > uint64(in.mem.Size()) {
		return &failure{kind: ErrABI, discard: true,
			detail: fmt.Sprintf("plasm_alloc(%d) returned %#x outside memory of %d bytes", want, ptr, in.mem.Size())}
	}
	in.bufPtr, in.bufCap = ptr, uint32(want)
	return nil
}

// classify turns a runtime error into a typed failure. The instance is
// always discarded: after a trap, exit or forced close its state is
// unknown (and usually the module is already closed).
func (in *instance) classify(callCtx context.Context, export string, err error) *failure {
	f := &failure{kind: ErrTrap, discard: true}
	var exit *sys.ExitError
	switch {
	case in.memory.hit.Load():
		f.kind = ErrMemoryLimit
		f.detail = fmt.Sprintf("%s: memory.grow past the %d-byte ceiling", export, in.memory.limit)
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded,
		errors.Is(callCtx.Err(), context.DeadlineExceeded):
		f.kind = ErrDeadline
		f.detail = export + " did not return in time"
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled,
		errors.Is(callCtx.Err(), context.Canceled):
		f.kind = context.Canceled
		f.detail = export + " was cancelled by the caller"
	default:
		f.detail = export + ": " + firstLine(err.Error())
		if tail := in.log.summary(); tail != "" {
			f.detail += "; guest output: " + tail
		}
	}
	return f
}

func (in *instance) close() {
	// Closing never blocks on a running call: wazero marks the module
	// closed and the call fails at its next check.
	_ = in.mod.Close(context.Background())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// ceilingMemory backs a guest's linear memory and refuses to grow it past
// limit, so memory.grow returns -1 inside the guest. hit records the refusal
// so a resulting trap is reported as ErrMemoryLimit.
type ceilingMemory struct {
	buf         []byte
	limit       uint64
	initialised bool
	hit         atomic.Bool
	// grown, shared by the module's instances, is the largest size any of
	// them has reached (nil: not tracked).
	grown *atomic.Uint64
}

func (m *ceilingMemory) Reallocate(size uint64) []byte {
	// The initial allocation is checked against the module's declared
	// minimum before instantiation; refusing it here would make wazero
	// panic instead of failing cleanly.
	if size > m.limit && m.initialised {
		m.hit.Store(true)
		return nil
	}
	m.initialised = true
	var seen uint64 // the largest size the module's instances had reached
	if m.grown != nil {
		seen = m.grown.Load()
		for old := seen; size > old && !m.grown.CompareAndSwap(old, size); old = m.grown.Load() {
		}
	}
	if size <= uint64(cap(m.buf)) {
		// Wasm memory never shrinks, so bytes between len and cap were
		// never handed out and are still zero.
		m.buf = m.buf[:size]
		return m.buf
	}
	// Half again of headroom, not a doubling, and from the first
	// allocation on, where it is at least what the module's instances have
	// grown to (at most twice the initial size); a later grow to a size
	// other instances passed reserves only up to what they reached. The
	// engine's Go runtime grows its memory a few times right after
	// instantiation (3.5 to 5.5 MiB), and each reallocation copies and
	// leaves the old buffer behind as garbage, while a doubling at the
	// first grow reserved 7 MiB of heap per idle instance for life. The
	// bound keeps a tenant whose programs grow memory far from making other
	// tenants' instances reserve more than that doubling did. Copies stay
	// geometric for a guest that keeps growing past what any instance
	// reached (about 7 from the engine's initial size to a 64 MiB ceiling).
	want := growCap(size)
	switch {
	case m.grown == nil:
	case cap(m.buf) == 0:
		want = max(want, min(seen, 2*size))
	case seen >= size:
		want = min(want, seen)
	}
	newCap := max(size, min(want, m.limit))
	buf := make([]byte, size, newCap)
	copy(buf, m.buf)
	m.buf = buf
	return buf
}

func (m *ceilingMemory) Free() { m.buf = nil }

// growCap is the capacity an allocation of size bytes reserves: size plus
// a half, in whole 64 KiB pages.
func growCap(size uint64) uint64 {
	const page = 64 << 10
	return (size + size/2 + page - 1) / page * page
}

var _ experimental.LinearMemory = (*ceilingMemory)(nil)

// guestLog keeps the beginning and the end of what a guest wrote to stdout
// and stderr during the current call, so a trap can be explained (a Go
// panic prints its message first and its stack last) without letting a
// chatty guest consume host memory. It never reaches the process's own
// stdout, which may be an MCP stdio transport.
type guestLog struct {
	head      []byte
	tail      []byte
	truncated bool
}

const (
	guestLogHead = 1 << 10
	guestLogTail = 3 << 10
)

func (l *guestLog) Write(p []byte) (int, error) {
	n := len(p)
	if room := guestLogHead - len(l.head); room > 0 {
		k := min(room, len(p))
		l.head = append(l.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= guestLogTail {
		l.truncated = l.truncated || len(l.tail) > 0 || len(p) > guestLogTail
		l.tail = append(l.tail[:0], p[len(p)-guestLogTail:]...)
		return n, nil
	}
	if over := len(l.tail) + len(p) - guestLogTail; over > 0 {
		l.truncated = true
		l.tail = append(l.tail[:0], l.tail[over:]...)
	}
	l.tail = append(l.tail, p...)
	return n, nil
}

func (l *guestLog) reset() {
	l.head, l.tail, l.truncated = l.head[:0], l.tail[:0], false
}

// summary returns the captured output as one line: at most the first few
// and the last few non-empty lines, joined with " | ".
func (l *guestLog) summary() string {
	const keepHead, keepTail = 3, 5
	split := func(s string) []string {
		var out []string
		for _, line := range strings.Split(s, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
		return out
	}
	var lines []string
	if !l.truncated {
		lines = split(string(l.head) + string(l.tail))
	} else {
		lines = split(string(l.head))
		tail := string(l.tail)
		if i := strings.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:] // the first line was cut in the middle
		}
		lines = append(append(lines, "…"), split(tail)...)
	}
	if len(lines) > keepHead+keepTail+1 {
		kept := append([]string{}, lines[:keepHead]...)
		if lines[keepHead] != "…" {
			kept = append(kept, "…")
		}
		lines = append(kept, lines[len(lines)-keepTail:]...)
	}
	return strings.Join(lines, " | ")
}

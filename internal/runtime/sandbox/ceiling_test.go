package sandbox

import (
	"sync/atomic"
	"testing"
)

// TestCeilingMemoryGrowth: a guest memory reserves half again of what it
// is asked for (in whole pages, never past the ceiling), grows in place
// within that, and past the ceiling is refused once initialised.
func TestCeilingMemoryGrowth(t *testing.T) {
	const page = 64 << 10
	m := &ceilingMemory{limit: 100 * page}
	steps := []struct {
		size    uint64
		wantCap uint64
		inPlace bool // the same backing array as the step before
		refused bool
	}{
		{size: 55 * page, wantCap: 83 * page},                // initial: 55 + 27.5, rounded up
		{size: 56 * page, wantCap: 83 * page, inPlace: true}, // the input buffer's page
		{size: 80 * page, wantCap: 83 * page, inPlace: true}, // the guest's runtime grows
		{size: 84 * page, wantCap: 100 * page},               // 126 pages, held to the ceiling
		{size: 100 * page, wantCap: 100 * page, inPlace: true},
		{size: 101 * page, refused: true},
	}
	var prev []byte
	for i, s := range steps {
		buf := m.Reallocate(s.size)
		if s.refused {
			if buf != nil || !m.hit.Load() {
				t.Fatalf("step %d: %d bytes past the ceiling were granted", i, s.size)
			}
			continue
		}
		if uint64(len(buf)) != s.size || uint64(cap(buf)) != s.wantCap {
			t.Fatalf("step %d: len %d cap %d, want %d and %d", i, len(buf), cap(buf), s.size, s.wantCap)
		}
		if i > 0 && (&buf[0] == &prev[0]) != s.inPlace {
			t.Fatalf("step %d: in place = %v, want %v", i, &buf[0] == &prev[0], s.inPlace)
		}
		prev = buf
	}
	// A first allocation over the ceiling is not refused (wazero checks
	// the declared minimum itself), and gets no headroom past it.
	big := &ceilingMemory{limit: 10 * page}
	if buf := big.Reallocate(12 * page); uint64(cap(buf)) != 12*page {
		t.Fatalf("initial over the ceiling: cap %d", cap(buf))
	}
}

// TestCeilingMemoryLearnsGrowth: a module's new instances reserve what its
// instances have grown to, so their first grows happen in place, but never
// more than twice their initial size, whatever one instance reached.
func TestCeilingMemoryLearnsGrowth(t *testing.T) {
	const page = 64 << 10
	var grown atomic.Uint64
	first := &ceilingMemory{limit: 1000 * page, grown: &grown}
	first.Reallocate(56 * page)
	first.Reallocate(88 * page)
	if got := grown.Load(); got != 88*page {
		t.Fatalf("grown %d pages, want 88", got/page)
	}
	next := &ceilingMemory{limit: 1000 * page, grown: &grown}
	buf := next.Reallocate(56 * page)
	if cap(buf) != 88*page {
		t.Fatalf("a new instance reserved %d pages, want 88", cap(buf)/page)
	}
	if grownBuf := next.Reallocate(88 * page); &grownBuf[0] != &buf[0] {
		t.Fatal("the learnt growth was not in place")
	}
	first.Reallocate(900 * page) // one instance grows far
	if buf := (&ceilingMemory{limit: 1000 * page, grown: &grown}).Reallocate(56 * page); cap(buf) != 112*page {
		t.Fatalf("after a far grow a new instance reserved %d pages, want 112 (twice 56)", cap(buf)/page)
	}
}

// TestCeilingMemoryFollowsOthers: an instance created before the module
// learnt its size grows, in one copy, to what another instance reached
// rather than half again past it; past every size seen it keeps half
// again of headroom.
func TestCeilingMemoryFollowsOthers(t *testing.T) {
	const page = 64 << 10
	var grown atomic.Uint64
	early := &ceilingMemory{limit: 1000 * page, grown: &grown}
	early.Reallocate(56 * page) // 84 pages reserved: nothing learnt yet
	other := &ceilingMemory{limit: 1000 * page, grown: &grown}
	other.Reallocate(56 * page)
	other.Reallocate(88 * page)
	if buf := early.Reallocate(88 * page); cap(buf) != 88*page {
		t.Fatalf("growing to a size another instance reached reserved %d pages, want 88", cap(buf)/page)
	}
	if buf := early.Reallocate(100 * page); cap(buf) != 150*page {
		t.Fatalf("growing past every size seen reserved %d pages, want 150", cap(buf)/page)
	}
}

package sandbox

import "testing"

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

package lang

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestTableMatchesMap drives a table and a map with the same random sets,
// gets and deletes, on either side of the size where the table starts
// indexing, and requires the same answers and the same key set throughout.
func TestTableMatchesMap(t *testing.T) {
	for _, keys := range []int{3, smallTable, smallTable + 1, 40} {
		t.Run(strconv.Itoa(keys), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(keys)))
			var tb table[int]
			m := map[string]int{}
			for step := range 4000 {
				k := "k" + strconv.Itoa(r.IntN(keys))
				switch op := r.IntN(10); {
				case op < 5:
					tb.set(k, step)
					m[k] = step
				case op < 8:
					got, ok := tb.get(k)
					want, wok := m[k]
					if got != want || ok != wok {
						t.Fatalf("step %d: get(%s) = %d, %v; want %d, %v", step, k, got, ok, want, wok)
					}
				case op < 9:
					tb.del(k)
					delete(m, k)
				default:
					if step%500 == 0 {
						tb.reset()
						clear(m)
					}
				}
				if tb.len() != len(m) {
					t.Fatalf("step %d: %d keys, want %d", step, tb.len(), len(m))
				}
			}
			got := slices.Sorted(slices.Values(tb.keys))
			var want []string
			for k := range m {
				want = append(want, k)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("keys %v, want %v", got, want)
			}
		})
	}
}

// Package gowork holds ordinary Go workloads, none of them plasmd's, that
// run both natively and compiled to wasip1 under wazero
// (BenchmarkGoWasm). Their ratios calibrate what compiling Go to Wasm
// costs by itself, so the engine's own sandbox-to-native ratios can be
// read against it. Every workload is deterministic and returns a checksum,
// so a test can check both sides did the same work.
package gowork

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Kinds names the workloads, in the order Run numbers them.
var Kinds = []string{"sort", "fib", "json", "map"}

// Run runs workload kind (an index into Kinds) at size n.
func Run(kind, n int) uint64 {
	switch kind {
	case 0:
		return Sort(n)
	case 1:
		return Fib(n)
	case 2:
		return JSON(n)
	case 3:
		return Map(n)
	}
	return 0
}

// Sort sorts n pseudo-random integers: tight loops over a slice.
func Sort(n int) uint64 {
	a := make([]uint64, n)
	x := uint64(88172645463325252)
	for i := range a {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		a[i] = x
	}
	slices.Sort(a)
	return a[n/2]
}

// Fib is the doubly recursive Fibonacci number: nothing but calls.
func Fib(n int) uint64 {
	if n < 2 {
		return uint64(n)
	}
	return Fib(n-1) + Fib(n-2)
}

type record struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

// JSON encodes n records with encoding/json and decodes them back:
// reflection, allocation and byte scanning.
func JSON(n int) uint64 {
	recs := make([]record, n)
	for i := range recs {
		recs[i] = record{ID: i, Name: "name-" + strconv.Itoa(i), Tags: []string{"a", "b"}, Attrs: map[string]string{"k": strconv.Itoa(i)}}
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return 0
	}
	var out []record
	if err := json.Unmarshal(b, &out); err != nil {
		return 0
	}
	return uint64(len(b)) + uint64(len(out))
}

// Map builds a map of n string keys and looks every key up ten times:
// string hashing and comparison, as symbol and catalog lookups do.
func Map(n int) uint64 {
	keys := make([]string, n)
	m := make(map[string]int, n)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
		m[keys[i]] = i
	}
	var sum uint64
	for range 10 {
		for _, k := range keys {
			sum += uint64(m[k])
		}
	}
	return sum
}

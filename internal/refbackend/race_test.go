//go:build race

package refbackend_test

// raceEnabled scales the differential test down under the race detector,
// which makes every run several times slower; make diff runs it in full.
const raceEnabled = true

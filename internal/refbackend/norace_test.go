//go:build !race

package refbackend_test

const raceEnabled = false

//go:build race

package sandbox

// raceEnabled skips measurements the race detector distorts (RSS, timing).
const raceEnabled = true

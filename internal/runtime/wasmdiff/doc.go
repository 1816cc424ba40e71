// Package wasmdiff is a temporary differential harness: it holds copies
// of wasmmeter, wasmbulk and wasmdata as they were before they moved onto
// wasmbin's shared instruction decoder and section iterator (commit
// e399f32), and a test and fuzz target that check the new packages give
// byte-identical results to the old ones. It is removed once the
// comparison has run; the commit that adds it keeps it reproducible.
package wasmdiff

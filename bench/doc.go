// Package bench holds benchmarks that compare plasmd with other Wasm plugin
// hosts. It is a separate module so that the main module never depends on
// the hosts it is measured against; it has no code of its own, only tests.
package bench

// Package pdk is the plasmd plugin development kit: what an API vendor
// imports to write a vendor module — catalog logic shipped as WebAssembly
// beside a catalog (module.wasm) and run by plasmd in each tenant's sandbox.
//
// # Building
//
// A vendor module is an ordinary Go main package built as a WASI reactor
// with the standard toolchain:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -o module.wasm ./yourmodule
//
// -trimpath and -buildvcs=false make the bytes a function of the sources
// and the toolchain, so the sha256 pinned in the catalog can be reproduced.
// The module's main function is never run; it must still exist.
//
// # Exports
//
// Importing pdk provides the exports every guest needs (plasm_abi_version,
// returning abi.Version, and plasm_alloc): the Go toolchain allows
// //go:wasmexport in any package, so they live here and a vendor never
// writes them. The hooks are exported by the vendor's main package, one
// line each, because the set of exports is what the catalog's
// `module: {hooks: […]}` is checked against when plasmd loads the catalog —
// a hook the vendor did not write must not be exported:
//
//	//go:wasmexport plasm_hook_prepare_request
//	func prepareRequest(n uint32) uint64 { return pdk.PrepareRequest(n, sign) }
//
//	//go:wasmexport plasm_hook_decode_response
//	func decodeResponse(n uint32) uint64 { return pdk.DecodeResponse(n, decode) }
//
//	//go:wasmexport plasm_hook_invoke
//	func invoke(n uint32) uint64 { return pdk.Invoke(n, serve) }
//
// The export names are abi.HookExport(hook).
//
// # Hooks
//
//   - prepare_request: receives the abi.CompiledRequest the standard engine
//     built from the catalog's mapping and returns the request to send
//     (e.g. with a signature header added).
//   - decode_response: receives the abi.DecodeRequest (status, headers,
//     pagination state) and the raw response body, and returns rows as an
//     abi.DecodeResponse. Return an *abi.Error for a backend error; plasmd
//     reports its message to the agent.
//   - invoke: serves a capability whose mapping says `transport: wasm`
//     entirely: receives the abi.CompileRequest (capability, variables,
//     page) and returns rows. The backend is reachable only through HTTP.
//
// # Host functions
//
// A module has no network, files or environment. Two host functions are
// its only doors, and the host decides what they may reach:
//
//   - HMACSHA256(secret, data) signs with a tenant secret the module names
//     but never sees;
//   - HTTP(req) sends a request through plasmd's egress: only to origins
//     the catalog declares, with the tenant's credentials injected by the
//     host per req.Auth.
//
// Outside a wasip1 build (native unit tests of a module's logic) both
// return ErrNoHost unless a test installs replacements with SetHost.
//
// An instance serves one call at a time and is never re-entered, so a
// module may keep state in package variables between calls, but plasmd
// discards instances freely: state is a cache, never a store.
package pdk

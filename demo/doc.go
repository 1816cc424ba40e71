// Package demo owns the embedded demo that `plasmd serve --demo` starts: a
// real in-process HTTP backend with deterministic seeded data, and the two
// catalogs that describe it.
//
// The backend serves two APIs on one loopback listener:
//
//   - tracker: a REST/JSON issue tracker under /tracker/api (bearer token auth,
//     offset/limit paging, filters, full-text search, create/update/delete and
//     a close action);
//   - kanban: a GraphQL board at /kanban/graphql (cursor connections, one
//     mutation, no auth).
//
// Both have an entity called Issue on purpose, so that a session federating
// the two catalogs exercises entity-name collisions.
//
// All seeded data comes from a fixed-seed PCG generator, so every process
// with the same Options.Seed serves byte-identical JSON until it is written
// to. Writes live in memory for the life of the Backend.
//
// The catalogs are embedded in Catalogs (catalogs/tracker, catalogs/kanban).
// Their http_backend points at PlaceholderOrigin; the server replaces that
// origin with the running backend's URL using Rebase after loading them.
package demo

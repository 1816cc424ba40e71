// Package metrics owns plasmd's Prometheus metrics: a private registry
// (never the global default, so tests and embedders get clean state), the
// sandbox.Observer that counts calls, errors, instances and waits, a
// collector that reads pool gauges from sandbox.Host.Stats at scrape time,
// and hooks for egress denials and backend requests. Handler serves the
// registry in the Prometheus text format, for GET /metrics.
//
// # Label cardinality
//
// A label takes values only from sets that are bounded by configuration or
// by code, never by request content:
//
//   - tenant: sandbox tenants are created only for tenants of the tenants
//     file (or the single "anonymous" tenant when auth is off), so the set
//     is bounded by the operator. As a guard against misuse, at most
//     Options.MaxTenants distinct values (default 1000) are kept per
//     process; later tenants are reported as "_other".
//   - export: the ABI's plasm_* export names the host calls (a fixed set
//     plus vendor hook names declared by loaded catalogs).
//   - entry_id: catalog entry IDs of loaded catalogs (bounded the same way
//     as tenant, by Options.MaxEntries, default 1000).
//   - result, type, reason, source, outcome, status_class: closed sets
//     defined in code (sandbox.Result*, sandbox.Discard*, sandbox.Busy*,
//     egress denial reasons).
//
// Histograms carry no tenant label: their per-bucket series would multiply
// the tenant count by the bucket count.
//
// # Metric names
//
//	| Name                                          | Type      | Labels                  | Meaning |
//	|-----------------------------------------------|-----------|-------------------------|---------|
//	| plasmd_sandbox_calls_total                    | counter   | tenant, export, result  | ops run in a tenant's sandbox; result ok, guest_error, deadline, trap, memory, busy, abi, too_large, closed, canceled, other |
//	| plasmd_sandbox_call_duration_seconds          | histogram | export                  | op latency, queueing included |
//	| plasmd_sandbox_errors_total                   | counter   | tenant, type            | failed ops by type (the result values except ok and guest_error) |
//	| plasmd_sandbox_deadline_hits_total            | counter   | tenant                  | ops stopped at their deadline |
//	| plasmd_sandbox_instances_live                 | gauge     | tenant                  | instances in existence (idle + serving) |
//	| plasmd_sandbox_instances_idle                 | gauge     | tenant                  | instances ready for a call |
//	| plasmd_sandbox_queue_waiting                  | gauge     | tenant                  | calls waiting for an instance |
//	| plasmd_sandbox_host_instances                 | gauge     |                         | tenant instances across the host (what the global cap bounds) |
//	| plasmd_sandbox_spare_instances                | gauge     |                         | ready spares across modules |
//	| plasmd_sandbox_instances_created_total        | counter   | tenant, source          | instances created; source spare or new |
//	| plasmd_sandbox_instances_evicted_total        | counter   | tenant                  | idle instances closed for the global cap |
//	| plasmd_sandbox_instances_discarded_total      | counter   | tenant, reason          | instances closed: failure, reconfigure, catalog, closed |
//	| plasmd_sandbox_wait_seconds                   | histogram | outcome                 | time calls waited for an instance; outcome acquired or busy |
//	| plasmd_sandbox_busy_total                     | counter   | tenant, reason          | calls refused busy: queue_full, queue_timeout, canceled, global_cap |
//	| plasmd_egress_denied_total                    | counter   | reason                  | backend requests refused by egress policy: origin, scheme, auth, forbidden_address |
//	| plasmd_backend_requests_total                 | counter   | entry_id, status_class  | backend requests sent; status_class 1xx..5xx or error |
//
// The registry also carries the standard go_* and process_* collectors.
package metrics

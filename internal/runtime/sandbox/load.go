package sandbox

// Load is state every instance of a tenant must hold before it serves a
// call: one op call (Export with Payload) applied once per instance and
// re-applied only when Digest changes. The pool knows nothing of what a
// load means; the engine client uses loads for catalogs (see
// CatalogLoads), and a load whose Key disappears retires the instances
// that hold it.
type Load struct {
	// Key identifies the load among a tenant's loads (an entry id).
	Key string
	// Name describes it in errors ("catalog \"tracker\"").
	Name    string
	Export  string
	Payload []byte
	Digest  string
	// Err, if set, is returned by every call instead of applying the load
	// (a load the host could not prepare).
	Err error
}

// dedupeLoads keeps the last load of each key, in first-seen order.
func dedupeLoads(loads []Load) []Load {
	out := make([]Load, 0, len(loads))
	seen := make(map[string]int, len(loads))
	for _, l := range loads {
		if i, dup := seen[l.Key]; dup {
			out[i] = l
			continue
		}
		seen[l.Key] = len(out)
		out = append(out, l)
	}
	return out
}

package catalog

// Derive kinds (Plasm's field derive rules): each computes a field's value
// from the JSON found at the field's path, after extraction.
const (
	// DeriveSegmentsAfterPrefix strips Prefix (or one of AltPrefixes) from
	// a string, splits the rest on "/" (skipping empty segments) and takes
	// segment PartIndex.
	DeriveSegmentsAfterPrefix = "segments_after_prefix"
	// DeriveNameValueLookup scans an array of objects for the first whose
	// MatchKey field equals Equals and takes its ValueField.
	DeriveNameValueLookup = "name_value_array_lookup"
	// DeriveObjectKeyLookup takes one key of an object.
	DeriveObjectKeyLookup = "object_key_lookup"
	// DeriveColonPair finds "<Segment>:<next>" in the strings at PreferKeys,
	// else in the RefField of the objects listed at BlocksKey.
	DeriveColonPair = "colon_pair_prefer_keys_else_block_refs"
)

// Derive is a field derive rule. Anything that does not match the rule's
// expectations (wrong JSON type, no match) derives null.
type Derive struct {
	Type            string   `json:"type"`
	Prefix          string   `json:"prefix,omitempty"`
	AltPrefixes     []string `json:"alternate_prefixes,omitempty"`
	PartIndex       int      `json:"part_index,omitempty"`
	Equals          string   `json:"equals,omitempty"`
	MatchKey        string   `json:"match_key_field,omitempty"`
	ValueField      string   `json:"value_field,omitempty"`
	Key             string   `json:"key,omitempty"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty"`
	PreferKeys      []string `json:"prefer_keys,omitempty"`
	BlocksKey       string   `json:"blocks_key,omitempty"`
	RefField        string   `json:"ref_field,omitempty"`
	Segment         string   `json:"segment,omitempty"`
}

// OAuth is Plasm's oauth: extension: which provider issues the tokens and
// which scopes exist. The token itself comes from the tenant's secrets.
type OAuth struct {
	Provider string   `json:"provider"`
	Scopes   []string `json:"scopes,omitempty"`
}

// Preprocess kinds (Plasm's response_preprocess).
const (
	// PreArrayFindPluck: in the array of objects at Path, the first whose
	// IDField equals the call's variable IDVar; its NestedArray becomes the
	// list of rows (none when nothing matches).
	PreArrayFindPluck = "array_find_pluck"
	// PreConcatFieldArrays: the FromEach arrays of the objects in the array
	// at Path, concatenated, become the list of rows.
	PreConcatFieldArrays = "concat_field_arrays"
	// PreStringIDsToObjects: the strings in the array at Path become
	// objects {Field: s} (other elements are dropped).
	PreStringIDsToObjects = "string_ids_to_field_objects"
)

// Preprocess reshapes a response body before rows are selected. When Path
// does not lead where the rule expects, the body is left as it is.
type Preprocess struct {
	Kind        string   `json:"kind"`
	Path        []string `json:"path"`
	IDField     string   `json:"id_field,omitempty"`
	IDVar       string   `json:"id_var,omitempty"`
	NestedArray string   `json:"nested_array,omitempty"`
	FromEach    string   `json:"from_each,omitempty"`
	Field       string   `json:"field,omitempty"`
}

// PreHydrateTarget is the preflight step plasmd runs: read the target row
// with the Get capability first and give the call its fields as
// <Prefix>_<field> variables (a reply reads parent_threadId).
const PreHydrateTarget = "hydrate_invoke_target"

// PreflightStep is one of Plasm's preflight steps.
type PreflightStep struct {
	Kind   string `json:"kind"`
	Get    string `json:"get,omitempty"`
	Prefix string `json:"prefix,omitempty"`
}

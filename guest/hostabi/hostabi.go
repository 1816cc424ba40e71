// Package hostabi is the host-import half of the plasmd guest ABI (guest/abi
// is the export half): the functions a vendor module may import, their
// status codes and encodings. It is a package of its own so that the
// standard engine, which imports nothing from the host, does not change when
// it does.
//
// Host imports are the only functions a vendor module may import besides WASI
// preview1. They live in the host module Module and are the module's
// only doors to secrets and the network; the host decides what each call
// may reach from the tenant and catalog the call runs for.
//
//	hmac_sha256(name_ptr, name_len, data_ptr, data_len, out_ptr u32) -> i32
//	    HMAC-SHA256 of data keyed with the tenant's secret called name,
//	    written as HMACSize bytes at out_ptr. The secret's bytes never
//	    enter guest memory.
//	http(req_ptr, req_len u32) -> i64
//	    Sends a JSON abi.CompiledRequest through the host's egress (declared
//	    origins only, tenant secrets injected by the host) and returns the
//	    size of the response, which the guest then fetches with http_read.
//	    The response is a frame: a Response header and the body.
//	http_read(out_ptr, out_len u32) -> i32
//	    Copies the pending http response to out_ptr; out_len must be at
//	    least its size. The response is dropped afterwards.
//
// Every function returns OK (or a size) on success and a negative
// Err* status on failure. The host never calls back into the guest, so a
// Go guest is never re-entered.
package hostabi

// Names of the host module and its functions.
const (
	Module     = "plasm"
	HMACSHA256 = "hmac_sha256"
	HTTP       = "http"
	HTTPRead   = "http_read"
)

// HMACSize is the length of an hmac_sha256 result.
const HMACSize = 32

// Host function status codes (negative results).
const (
	OK = 0
	// ErrNoContext: the call was not made on behalf of a tenant (e.g.
	// during instantiation), so there are no secrets or origins to use.
	ErrNoContext = -1
	// ErrBounds: a pointer/length pair lies outside guest memory, or an
	// output buffer is too small.
	ErrBounds = -2
	// ErrSecret: the named secret is not configured for the tenant.
	ErrSecret = -3
	// ErrRequest: the http request is not a valid CompiledRequest.
	ErrRequest = -4
	// ErrNoResponse: http_read without a pending response.
	ErrNoResponse = -5
	// ErrUnavailable: the host offers no egress to this call.
	ErrUnavailable = -6
)

// StatusText names a host function status for error messages.
func StatusText(code int64) string {
	switch code {
	case ErrNoContext:
		return "host function called outside a tenant call"
	case ErrBounds:
		return "pointer or length outside guest memory, or buffer too small"
	case ErrSecret:
		return "secret not configured for this tenant"
	case ErrRequest:
		return "malformed request"
	case ErrNoResponse:
		return "no pending response"
	case ErrUnavailable:
		return "egress not available to this call"
	}
	return "unknown host status"
}

// Response is the header of an http response frame. A request the host
// refused or could not complete has Error set (and no body); ErrorKind is
// one of the Egress* kinds so guests can branch on it.
type Response struct {
	Status    int                 `json:"status,omitempty"`
	Headers   map[string][]string `json:"headers,omitempty"`
	Error     string              `json:"error,omitempty"`
	ErrorKind string              `json:"error_kind,omitempty"`
}

// Kinds of Response.Error.
const (
	EgressDenied    = "denied"
	EgressTimeout   = "timeout"
	EgressTooLarge  = "too_large"
	EgressSecret    = "secret"
	EgressTransport = "transport"
)

package pdk

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/hostabi"
)

// ErrNoHost is returned by the host functions when the module does not run
// inside plasmd (a native build without SetHost).
var ErrNoHost = errors.New("pdk: no plasmd host (not a wasip1 build)")

// Host is the pair of host functions; tests of a module's logic install a
// fake one with SetHost.
type Host interface {
	HMACSHA256(secret string, data []byte) ([]byte, error)
	HTTP(req *abi.CompiledRequest) (*Response, error)
}

var host Host = noHost{}

// SetHost replaces the host functions and returns the previous ones. It is
// meant for native tests; a wasip1 build starts with plasmd's imports.
func SetHost(h Host) Host {
	old := host
	host = h
	return old
}

type noHost struct{}

func (noHost) HMACSHA256(string, []byte) ([]byte, error)    { return nil, ErrNoHost }
func (noHost) HTTP(*abi.CompiledRequest) (*Response, error) { return nil, ErrNoHost }

// HMACSHA256 returns the HMAC-SHA256 of data keyed with the tenant secret
// named secret (as the catalog and the tenant's secret store name it). The
// secret itself never enters the module.
func HMACSHA256(secret string, data []byte) ([]byte, error) { return host.HMACSHA256(secret, data) }

// Response is a backend answer to HTTP.
type Response struct {
	Status  int
	Headers map[string][]string
	Body    []byte
}

// Header returns the first value of the named header (canonical form, e.g.
// "Content-Type").
func (r *Response) Header(name string) string {
	if v := r.Headers[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// EgressError is a request the host refused or could not complete. Kind is
// one of the abi.Egress* values (hostabi.EgressDenied for an origin the catalog
// does not declare).
type EgressError struct {
	Kind    string
	Message string
}

func (e *EgressError) Error() string { return e.Message }

// HostError is a host function failing at the ABI level (abi.HostErr*).
type HostError struct {
	Func string
	Code int64
}

func (e *HostError) Error() string {
	return fmt.Sprintf("pdk: host %s: %s (%d)", e.Func, hostabi.StatusText(e.Code), e.Code)
}

// HTTP sends req through the host's egress and returns the backend's
// answer. Any HTTP status is a Response; a refused or failed request is an
// *EgressError.
func HTTP(req *abi.CompiledRequest) (*Response, error) { return host.HTTP(req) }

// parseHTTPResponse decodes the frame the host's http import produces.
func parseHTTPResponse(frame []byte) (*Response, error) {
	head, body, err := abi.SplitFrame(frame)
	if err != nil {
		return nil, fmt.Errorf("pdk: http response: %w", err)
	}
	var h hostabi.Response
	if err := abi.Unmarshal(head, &h); err != nil {
		return nil, fmt.Errorf("pdk: http response header: %w", err)
	}
	if h.Error != "" {
		return nil, &EgressError{Kind: h.ErrorKind, Message: h.Error}
	}
	return &Response{Status: h.Status, Headers: h.Headers, Body: body}, nil
}

// Errorf returns a guest error with code (one of the abi.Code* values).
func Errorf(code, format string, args ...any) *abi.Error {
	return &abi.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// HandlePrepareRequest runs a prepare_request handler on one input and
// returns the output envelope. PrepareRequest is the export-side wrapper;
// this is the same logic without guest memory, for native tests.
func HandlePrepareRequest(in []byte, fn func(*abi.CompiledRequest) (*abi.CompiledRequest, error)) []byte {
	var req abi.CompiledRequest
	if err := abi.Unmarshal(in, &req); err != nil {
		return errorEnvelope(Errorf(abi.CodeBadRequest, "prepare_request: %v", err))
	}
	return respond(fn(&req))
}

// HandleDecodeResponse runs a decode_response handler on one input frame
// (abi.DecodeRequest header, response body).
func HandleDecodeResponse(in []byte, fn func(*abi.DecodeRequest, []byte) (*abi.DecodeResponse, error)) []byte {
	head, body, err := abi.SplitFrame(in)
	if err != nil {
		return errorEnvelope(Errorf(abi.CodeBadRequest, "decode_response: %v", err))
	}
	var req abi.DecodeRequest
	if err := abi.Unmarshal(head, &req); err != nil {
		return errorEnvelope(Errorf(abi.CodeBadRequest, "decode_response: %v", err))
	}
	return respond(fn(&req, body))
}

// HandleInvoke runs an invoke handler on one input.
func HandleInvoke(in []byte, fn func(*abi.CompileRequest) (*abi.DecodeResponse, error)) []byte {
	var req abi.CompileRequest
	if err := abi.Unmarshal(in, &req); err != nil {
		return errorEnvelope(Errorf(abi.CodeBadRequest, "invoke: %v", err))
	}
	return respond(fn(&req))
}

// respond builds the envelope for a handler's result. A handler's panic is
// not caught: it traps, and the host discards the instance, which is the
// right response to a module in an unknown state.
func respond[T any](v *T, err error) []byte {
	if err != nil {
		var ae *abi.Error
		if !errors.As(err, &ae) {
			ae = &abi.Error{Code: abi.CodeInternal, Message: err.Error()}
		}
		return errorEnvelope(ae)
	}
	if v == nil {
		return errorEnvelope(Errorf(abi.CodeInternal, "hook returned no result"))
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		return errorEnvelope(Errorf(abi.CodeInternal, "encode result: %v", merr))
	}
	return append([]byte{abi.StatusOK}, b...)
}

func errorEnvelope(e *abi.Error) []byte {
	if e.Code == "" {
		e.Code = abi.CodeInternal
	}
	b, err := json.Marshal(e)
	if err != nil {
		b = []byte(`{"code":"internal","message":"unencodable error"}`)
	}
	return append([]byte{abi.StatusError}, b...)
}

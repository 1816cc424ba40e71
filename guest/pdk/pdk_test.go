package pdk

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/hostabi"
)

func TestEnvelopes(t *testing.T) {
	echo := func(r *abi.CompiledRequest) (*abi.CompiledRequest, error) { return r, nil }
	fail := func(r *abi.CompiledRequest) (*abi.CompiledRequest, error) {
		return nil, Errorf(abi.CodeDecode, "nope %s", r.Method)
	}
	plain := func(*abi.CompiledRequest) (*abi.CompiledRequest, error) { return nil, errors.New("plain") }
	none := func(*abi.CompiledRequest) (*abi.CompiledRequest, error) { return nil, nil }
	cases := []struct {
		name   string
		in     string
		fn     func(*abi.CompiledRequest) (*abi.CompiledRequest, error)
		status byte
		want   string
	}{
		{"ok", `{"method":"GET","url":"u"}`, echo, abi.StatusOK, `{"method":"GET","url":"u"}`},
		{"guest error", `{"method":"GET","url":"u"}`, fail, abi.StatusError, `{"code":"decode","message":"nope GET"}`},
		{"plain error", `{}`, plain, abi.StatusError, `{"code":"internal","message":"plain"}`},
		{"nil result", `{}`, none, abi.StatusError, `{"code":"internal","message":"hook returned no result"}`},
		{"bad json", `{`, echo, abi.StatusError, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := HandlePrepareRequest([]byte(c.in), c.fn)
			if out[0] != c.status {
				t.Fatalf("status %d: %s", out[0], out[1:])
			}
			if c.want != "" && string(out[1:]) != c.want {
				t.Fatalf("got %s, want %s", out[1:], c.want)
			}
		})
	}
}

func TestParseHTTPResponse(t *testing.T) {
	ok, _ := abi.AppendFrame(nil, &hostabi.Response{Status: 201, Headers: map[string][]string{"Content-Type": {"text/plain"}}}, []byte("body"))
	r, err := parseHTTPResponse(ok)
	if err != nil || r.Status != 201 || string(r.Body) != "body" || r.Header("Content-Type") != "text/plain" {
		t.Fatalf("%+v %v", r, err)
	}
	denied, _ := abi.AppendFrame(nil, &hostabi.Response{Error: "egress denied: x", ErrorKind: hostabi.EgressDenied}, nil)
	_, err = parseHTTPResponse(denied)
	var ee *EgressError
	if !errors.As(err, &ee) || ee.Kind != hostabi.EgressDenied {
		t.Fatalf("denied: %v", err)
	}
	if _, err := parseHTTPResponse([]byte{1}); err == nil {
		t.Fatal("short frame accepted")
	}
}

func TestNoHostOutsideWasm(t *testing.T) {
	if _, err := HMACSHA256("K", nil); !errors.Is(err, ErrNoHost) {
		t.Fatalf("HMACSHA256: %v", err)
	}
	if _, err := HTTP(&abi.CompiledRequest{}); !errors.Is(err, ErrNoHost) {
		t.Fatalf("HTTP: %v", err)
	}
}

// FuzzHandlers feeds arbitrary input to the decoders a hook runs before
// vendor code: they must answer with an envelope, never panic.
func FuzzHandlers(f *testing.F) {
	frame, _ := abi.AppendFrame(nil, &abi.DecodeRequest{Status: 200}, []byte(`{"x":1}`))
	f.Add(frame)
	f.Add([]byte(`{"method":"GET"}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		outs := [][]byte{
			HandleDecodeResponse(in, func(*abi.DecodeRequest, []byte) (*abi.DecodeResponse, error) { return &abi.DecodeResponse{}, nil }),
			HandleInvoke(in, func(*abi.CompileRequest) (*abi.DecodeResponse, error) { return &abi.DecodeResponse{}, nil }),
			HandlePrepareRequest(in, func(r *abi.CompiledRequest) (*abi.CompiledRequest, error) { return r, nil }),
		}
		for _, out := range outs {
			if len(out) == 0 || (out[0] != abi.StatusOK && out[0] != abi.StatusError) || !json.Valid(out[1:]) {
				t.Fatalf("bad envelope %q", out)
			}
		}
		_, _ = parseHTTPResponse(in)
	})
}

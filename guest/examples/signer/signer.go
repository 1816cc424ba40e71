// Command signer is an example plasmd vendor module, written with
// guest/pdk, for the demo ledger API (demo/catalogs/ledger):
//
//   - prepare_request signs every request: HMAC-SHA256 over
//     "METHOD\nPATH?QUERY\nBODY", keyed with the tenant secret
//     LEDGER_SIGNING_KEY (computed by the host, so the key never enters the
//     module), hex-encoded in the X-Ledger-Signature header;
//   - decode_response turns the ledger's columnar envelope
//     {"ok":true,"data":{"cols":[…],"vals":[[…],…]},"cursor":…} into rows,
//     and its error envelope {"ok":false,"error":{code,message}} into an
//     error whose message plasmd shows the agent.
//
// Build it with `make modules`; the catalog pins the result by sha256.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/pdk"
)

// SigningKeySecret names the tenant secret requests are signed with.
const SigningKeySecret = "LEDGER_SIGNING_KEY"

// SignatureHeader carries the hex signature.
const SignatureHeader = "X-Ledger-Signature"

// main is never run in a reactor; the Go toolchain still requires it.
func main() {}

// signingString must match what the ledger verifies.
func signingString(method, requestURI, body string) []byte {
	return []byte(method + "\n" + requestURI + "\n" + body)
}

// sign adds the signature header to a compiled request.
func sign(req *abi.CompiledRequest) (*abi.CompiledRequest, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, pdk.Errorf(abi.CodeBadRequest, "sign: malformed URL: %v", err)
	}
	mac, err := pdk.HMACSHA256(SigningKeySecret, signingString(req.Method, u.RequestURI(), req.Body))
	if err != nil {
		return nil, pdk.Errorf(abi.CodeInternal, "sign with %s: %v", SigningKeySecret, err)
	}
	out := *req
	out.Headers = make([][2]string, 0, len(req.Headers)+1)
	for _, h := range req.Headers {
		// A mapping must not be able to smuggle in a signature of its own.
		if !equalFold(h[0], SignatureHeader) {
			out.Headers = append(out.Headers, h)
		}
	}
	out.Headers = append(out.Headers, [2]string{SignatureHeader, hex.EncodeToString(mac)})
	return &out, nil
}

func equalFold(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }

// envelope is the ledger's response shape.
type envelope struct {
	OK   bool `json:"ok"`
	Data *struct {
		Cols []string          `json:"cols"`
		Vals []json.RawMessage `json:"vals"`
	} `json:"data"`
	Cursor *string `json:"cursor"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decode turns a ledger envelope into rows.
func decode(req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		return nil, pdk.Errorf(abi.CodeDecode, "ledger answered %d with a body that is not a ledger envelope: %v", req.Status, err)
	}
	if !env.OK || req.Status < 200 || req.Status > 299 {
		msg := fmt.Sprintf("ledger answered %d without an error message", req.Status)
		if env.Error != nil {
			msg = fmt.Sprintf("%s: %s", env.Error.Code, env.Error.Message)
		}
		return nil, pdk.Errorf(abi.CodeDecode, "%s", msg)
	}
	if env.Data == nil {
		return nil, pdk.Errorf(abi.CodeDecode, "ledger envelope has ok=true but no data")
	}
	t := abi.Table{Columns: env.Data.Cols, Rows: make([][]any, 0, len(env.Data.Vals))}
	for i, raw := range env.Data.Vals {
		var row []any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&row); err != nil {
			return nil, pdk.Errorf(abi.CodeDecode, "ledger row %d: %v", i+1, err)
		}
		if len(row) != len(t.Columns) {
			return nil, pdk.Errorf(abi.CodeDecode, "ledger row %d has %d values for %d columns", i+1, len(row), len(t.Columns))
		}
		for j, v := range row {
			row[j] = normalize(v)
		}
		t.Rows = append(t.Rows, row)
	}
	resp := &abi.DecodeResponse{Table: t}
	if env.Cursor != nil && *env.Cursor != "" {
		resp.Next = map[string]any{"cursor": *env.Cursor}
	}
	return resp, nil
}

// normalize keeps integers integral: amounts are cents, and a float64 would
// print 1.5e+06 for them.
func normalize(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return n.String()
}

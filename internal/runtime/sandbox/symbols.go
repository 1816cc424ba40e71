package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/plasmd/plasmd/internal/model/symbol"
)

// Symbols is a session's symbol map encoded for plan requests: the JSON
// the guest decodes and the digest each instance caches the decoded map
// under (abi.PlanRequest.SymbolsDigest). A session's map only changes with
// its revision, so callers encode it once per revision and reuse the value
// for every plan request instead of re-encoding and re-hashing the whole
// map each time. A Symbols value is immutable once built.
type Symbols struct {
	json   []byte
	digest string
}

// EncodeSymbols encodes m once. A nil map encodes to nil (wire names only).
func EncodeSymbols(m *symbol.Map) (*Symbols, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode symbol map: %w", err)
	}
	sum := sha256.Sum256(b)
	return &Symbols{json: b, digest: hex.EncodeToString(sum[:16])}, nil
}

// Digest is the name the guest caches the decoded map under.
func (s *Symbols) Digest() string {
	if s == nil {
		return ""
	}
	return s.digest
}

// Len is the size of the encoded map in bytes.
func (s *Symbols) Len() int {
	if s == nil {
		return 0
	}
	return len(s.json)
}

// Package credstore keeps per-principal upstream credentials: the secrets
// a catalog's auth needs, stored for one person (tenant + principal) so
// their agent calls the API as them. The file store encrypts the whole
// document at rest with AES-256-GCM under a key from the environment.
package credstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Errors callers branch on.
var (
	// ErrNotFound: no credential is stored for this principal and catalog.
	ErrNotFound = errors.New("no credential stored")
	// ErrKey: the encryption key is missing or malformed.
	ErrKey = errors.New("credential store key")
	// ErrCorrupt: the file cannot be decrypted or decoded (wrong key,
	// tampering, truncation).
	ErrCorrupt = errors.New("credential store unreadable")
)

// KeyEnv is the environment variable holding the store's key: 32 bytes,
// base64 (standard or URL alphabet) encoded.
const KeyEnv = "PLASMD_CREDENTIALS_KEY"

// Store holds credentials by (tenant, principal, catalog entry id). A
// credential maps the catalog's secret names to values.
type Store interface {
	Get(ctx context.Context, tenant, principal, entryID string) (map[string]string, error)
	Put(ctx context.Context, tenant, principal, entryID string, secrets map[string]string) error
	Delete(ctx context.Context, tenant, principal, entryID string) error
	// List returns the entry ids the principal has credentials for.
	List(ctx context.Context, tenant, principal string) ([]string, error)
}

// key is the composite map key; JSON-encoded so no id can forge another
// id's key with a separator.
func key(tenant, principal, entryID string) string {
	b, _ := json.Marshal([3]string{tenant, principal, entryID})
	return string(b)
}

// Memory is an in-process Store (tests, and servers without a file).
type Memory struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{m: map[string]map[string]string{}} }

// Get implements Store.
func (s *Memory) Get(_ context.Context, tenant, principal, entryID string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key(tenant, principal, entryID)]
	if !ok {
		return nil, ErrNotFound
	}
	return maps.Clone(v), nil
}

// Put implements Store.
func (s *Memory) Put(_ context.Context, tenant, principal, entryID string, secrets map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key(tenant, principal, entryID)] = maps.Clone(secrets)
	return nil
}

// Delete implements Store.
func (s *Memory) Delete(_ context.Context, tenant, principal, entryID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key(tenant, principal, entryID))
	return nil
}

// List implements Store.
func (s *Memory) List(_ context.Context, tenant, principal string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.m {
		var parts [3]string
		if json.Unmarshal([]byte(k), &parts) == nil && parts[0] == tenant && parts[1] == principal {
			out = append(out, parts[2])
		}
	}
	slices.Sort(out)
	return out, nil
}

// File is a Store persisted to one file, encrypted with AES-256-GCM: a
// fresh random nonce per write, the format version as additional data.
// It keeps the decrypted map in memory and rewrites the file atomically
// (temp file + rename, mode 0600) on every change.
type File struct {
	mem  *Memory
	path string
	aead cipher.AEAD
	wmu  sync.Mutex
}

const fileAAD = "plasmd-credentials-v1"

// ParseKey decodes a base64 key of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: %s is not set (32 random bytes, base64)", ErrKey, KeyEnv)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != 32 {
				return nil, fmt.Errorf("%w: %s must decode to 32 bytes, got %d", ErrKey, KeyEnv, len(k))
			}
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: %s is not base64", ErrKey, KeyEnv)
}

// OpenFile opens (or creates on first write) an encrypted store at path.
func OpenFile(path string, key []byte) (*File, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	f := &File{mem: NewMemory(), path: path, aead: aead}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credential store %s: %w", path, err)
	}
	ns := aead.NonceSize()
	if len(raw) < ns {
		return nil, fmt.Errorf("%w: %s is truncated", ErrCorrupt, path)
	}
	plain, err := aead.Open(nil, raw[:ns], raw[ns:], []byte(fileAAD))
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not decrypt with this key", ErrCorrupt, path)
	}
	if err := json.Unmarshal(plain, &f.mem.m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if f.mem.m == nil {
		f.mem.m = map[string]map[string]string{}
	}
	return f, nil
}

// Get implements Store.
func (f *File) Get(ctx context.Context, tenant, principal, entryID string) (map[string]string, error) {
	return f.mem.Get(ctx, tenant, principal, entryID)
}

// List implements Store.
func (f *File) List(ctx context.Context, tenant, principal string) ([]string, error) {
	return f.mem.List(ctx, tenant, principal)
}

// Put implements Store.
func (f *File) Put(ctx context.Context, tenant, principal, entryID string, secrets map[string]string) error {
	return f.change(func(m *Memory) { _ = m.Put(ctx, tenant, principal, entryID, secrets) })
}

// Delete implements Store.
func (f *File) Delete(ctx context.Context, tenant, principal, entryID string) error {
	return f.change(func(m *Memory) { _ = m.Delete(ctx, tenant, principal, entryID) })
}

// change applies fn and persists; on a write failure the in-memory state
// is rolled back so memory never holds what the disk does not.
func (f *File) change(fn func(*Memory)) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mem.mu.Lock()
	before := cloneAll(f.mem.m)
	f.mem.mu.Unlock()
	fn(f.mem)
	f.mem.mu.Lock()
	plain, err := json.Marshal(f.mem.m)
	f.mem.mu.Unlock()
	if err == nil {
		err = f.write(plain)
	}
	if err != nil {
		f.mem.mu.Lock()
		f.mem.m = before
		f.mem.mu.Unlock()
		return fmt.Errorf("credential store %s: %w", f.path, err)
	}
	return nil
}

func (f *File) write(plain []byte) error {
	nonce := make([]byte, f.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	out := f.aead.Seal(nonce, nonce, plain, []byte(fileAAD))
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}

func cloneAll(m map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(m))
	for k, v := range m {
		out[k] = maps.Clone(v)
	}
	return out
}

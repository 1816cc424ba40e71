package credstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/plasmd/plasmd/server/internal/credstore"
)

func newKey(t *testing.T) []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestStores(t *testing.T) {
	dir := t.TempDir()
	file, err := credstore.OpenFile(filepath.Join(dir, "creds"), newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]credstore.Store{"memory": credstore.NewMemory(), "file": file} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := s.Get(ctx, "a", "alice", "tracker"); !errors.Is(err, credstore.ErrNotFound) {
				t.Fatalf("empty store: %v", err)
			}
			if err := s.Put(ctx, "a", "alice", "tracker", map[string]string{"TOKEN": "t-alice"}); err != nil {
				t.Fatal(err)
			}
			_ = s.Put(ctx, "a", "bob", "tracker", map[string]string{"TOKEN": "t-bob"})
			_ = s.Put(ctx, "b", "alice", "tracker", map[string]string{"TOKEN": "t-b-alice"})
			got, err := s.Get(ctx, "a", "alice", "tracker")
			if err != nil || got["TOKEN"] != "t-alice" {
				t.Fatalf("get %v %v", got, err)
			}
			got["TOKEN"] = "mutated"
			if again, _ := s.Get(ctx, "a", "alice", "tracker"); again["TOKEN"] != "t-alice" {
				t.Fatal("Get returned shared memory")
			}
			// Ids with separators cannot alias another key.
			if _, err := s.Get(ctx, "a", "alice\x00tracker", ""); !errors.Is(err, credstore.ErrNotFound) {
				t.Fatal("composite key aliasing")
			}
			if l, _ := s.List(ctx, "a", "alice"); !slices.Equal(l, []string{"tracker"}) {
				t.Fatalf("list %v", l)
			}
			if err := s.Delete(ctx, "a", "alice", "tracker"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "a", "alice", "tracker"); !errors.Is(err, credstore.ErrNotFound) {
				t.Fatal("delete kept the credential")
			}
		})
	}
}

func TestFileEncryptedAtRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds")
	key := newKey(t)
	f, err := credstore.OpenFile(path, key)
	if err != nil {
		t.Fatal(err)
	}
	secret := "very-secret-upstream-token"
	if err := f.Put(context.Background(), "a", "alice@example.test", "tracker", map[string]string{"TOKEN": secret}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range []string{secret, "alice@example.test", "tracker", "TOKEN"} {
		if bytes.Contains(raw, []byte(plain)) {
			t.Fatalf("file holds %q in clear", plain)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	// Reopened with the key: the credential is back.
	g, err := credstore.OpenFile(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := g.Get(context.Background(), "a", "alice@example.test", "tracker"); v["TOKEN"] != secret {
		t.Fatal("not persisted")
	}
	// Another key, a flipped bit, a truncation: refused, typed.
	if _, err := credstore.OpenFile(path, newKey(t)); !errors.Is(err, credstore.ErrCorrupt) {
		t.Fatalf("wrong key: %v", err)
	}
	raw[len(raw)-1] ^= 1
	_ = os.WriteFile(path, raw, 0o600)
	if _, err := credstore.OpenFile(path, key); !errors.Is(err, credstore.ErrCorrupt) {
		t.Fatalf("tampered: %v", err)
	}
	_ = os.WriteFile(path, raw[:5], 0o600)
	if _, err := credstore.OpenFile(path, key); !errors.Is(err, credstore.ErrCorrupt) {
		t.Fatalf("truncated: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	k := newKey(t)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		got, err := credstore.ParseKey(enc.EncodeToString(k))
		if err != nil || !bytes.Equal(got, k) {
			t.Fatalf("ParseKey: %v", err)
		}
	}
	for _, bad := range []string{"", "!!!", base64.StdEncoding.EncodeToString(k[:16])} {
		if _, err := credstore.ParseKey(bad); !errors.Is(err, credstore.ErrKey) {
			t.Fatalf("ParseKey(%q) = %v", bad, err)
		}
	}
}

func FuzzOpenFile(f *testing.F) {
	f.Add([]byte("short"))
	f.Add(bytes.Repeat([]byte{0}, 64))
	key := bytes.Repeat([]byte{7}, 32)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte) {
		path := filepath.Join(dir, "fuzz")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := credstore.OpenFile(path, key); err == nil {
			t.Fatal("random bytes decrypted")
		}
	})
}

package catalogdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// FuzzLoad feeds arbitrary bytes as domain.yaml and mappings.yaml (or as one
// combined file). The loader must never panic, and must return either a
// catalog or positioned problems, never both and never neither.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{sharedTracker, "../../../testdata/catalogs/linear", "../../../testdata/catalogs/views"} {
		d, err := os.ReadFile(filepath.Join(dir, DomainFile))
		if err != nil {
			f.Fatal(err)
		}
		m, err := os.ReadFile(filepath.Join(dir, MappingsFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(d, m, false)
		f.Add(append(d, "mappings:\n  x: {transport: wasm}\n"...), []byte(nil), true)
	}
	cases, _ := filepath.Glob("testdata/errors/*.txtar")
	for _, c := range cases {
		data, err := os.ReadFile(c)
		if err != nil {
			f.Fatal(err)
		}
		files := parseArchive(data)
		f.Add(files[DomainFile], files[MappingsFile], false)
	}
	f.Add([]byte("a: &a [*a]"), []byte("*x"), false)
	f.Add([]byte("version: 1\nhttp_backend: http://[::ffff:10.0.0.1]:8/\nauth: {scheme: oauth2_client_credentials, token_url: 'http://0x7f.1/'}\nentities: {E: {fields: {id: {value_ref: s}}}}\nvalues: {s: {type: string}}\ncapabilities: {e_query: {kind: query, entity: E}}"),
		[]byte("e_query: {method: GET, path: [{type: literal, value: 'http://169.254.169.254/x'}, {type: literal, value: 'http://[fe80::1%25eth0]/'}]}"), false)
	f.Add([]byte("version: 1\nvalues: {a: {type: array, items: {value_ref: b}}, b: {type: array, items: {value_ref: a}}}"), []byte("{}"), false)
	f.Add([]byte("\xef\xbb\xbfversion: 1"), []byte("? [a]\n: b"), true)
	f.Add([]byte("version: 1\n"), []byte("x: {query: {type: const, value: {a: [1, 2.5e300, -0, 0x10, .inf]}}}"), false)
	// Over the engine's bounds (bounds.go): the domain cases of TestCheckPositions and a 129-step items_path.
	for _, tc := range checkCases[:12] {
		fsys, _ := tc.fsOf()
		if tc.cgs == "" {
			f.Add(fsys["c/domain.yaml"].Data, fsys["c/mappings.yaml"].Data, false)
		}
	}
	f.Add([]byte(baseDomain), []byte(mappingsWith("  response: {items_path: "+keys(129)+"}\n")), false)

	f.Fuzz(func(t *testing.T, domain, mappings []byte, combined bool) {
		fsys := fstest.MapFS{}
		dir := "c"
		if combined {
			fsys["c.cgs.yaml"] = &fstest.MapFile{Data: domain}
			dir = "c.cgs.yaml"
		} else {
			fsys["c/domain.yaml"] = &fstest.MapFile{Data: domain}
			fsys["c/mappings.yaml"] = &fstest.MapFile{Data: mappings}
		}
		c, err := Load(fsys, dir, "")
		if (c == nil) == (err == nil) {
			t.Fatalf("catalog %v with error %v", c != nil, err)
		}
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("want a non-empty ErrorList, got %T %v", err, err)
			}
			for _, e := range list {
				if e.File == "" || e.Msg == "" || e.Line < 0 || e.Column < 0 {
					t.Fatalf("malformed problem %#v", e)
				}
			}
			return
		}
		if c.Version < 1 || c.Entities == nil || c.Capabilities == nil || c.Mappings == nil || len(c.Digest) != 64 {
			t.Fatalf("incomplete catalog %+v", c)
		}
		for name := range c.Capabilities {
			if c.Mappings[name] == nil {
				t.Fatalf("capability %s loaded without a mapping", name)
			}
		}
		// What the loader builds, the engine must take (catalog.Check).
		if err := c.Check(); err != nil {
			t.Fatalf("loaded a catalog the engine refuses: %v", err)
		}
	})
}

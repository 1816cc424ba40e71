package wasmmeter

import "github.com/plasmd/plasmd/internal/runtime/wasmbin"

// A small module builder for tests: hand-assembled bytes, no toolchain.

// header starts every module the tests build.
var header = []byte(wasmbin.Header)

const (
	tI32     = 0x7f
	tI64     = 0x7e
	tFuncref = 0x70
)

type fnType struct{ params, results []byte }

type global struct {
	typ  byte
	mut  bool
	init []byte // constant expression without its end
}

type export struct {
	name string
	kind byte
	idx  uint32
}

type imp struct {
	mod, name string
	typ       uint32
}

// mod describes a module; build encodes it.
type mod struct {
	types    []fnType
	imports  []imp // function imports only
	funcs    []uint32
	table    uint32 // minimum size of table 0; 0: no table
	memory   bool
	globals  []global
	exports  []export
	start    *uint32
	elements [][]byte // raw element segments
	bodies   [][]byte // instructions, without locals and without the final end
	locals   [][]byte // per body: the encoded local declarations; missing or nil: none
	names    []byte   // raw name section payload after "name"; nil: none
}

func uleb(v uint32) []byte { return wasmbin.AppendU32(nil, v) }

func sect(id byte, payload []byte) []byte {
	return append(append([]byte{id}, uleb(uint32(len(payload)))...), payload...)
}

func vec(n int, items ...[]byte) []byte {
	out := uleb(uint32(n))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func str(s string) []byte { return append(uleb(uint32(len(s))), s...) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func (m *mod) build() []byte {
	out := append([]byte(nil), header...)
	if len(m.types) > 0 {
		var items [][]byte
		for _, t := range m.types {
			items = append(items, cat([]byte{0x60}, vec(len(t.params), t.params), vec(len(t.results), t.results)))
		}
		out = append(out, sect(secType, vec(len(items), items...))...)
	}
	if len(m.imports) > 0 {
		var items [][]byte
		for _, im := range m.imports {
			items = append(items, cat(str(im.mod), str(im.name), []byte{0}, uleb(im.typ)))
		}
		out = append(out, sect(secImport, vec(len(items), items...))...)
	}
	if len(m.funcs) > 0 {
		var items [][]byte
		for _, f := range m.funcs {
			items = append(items, uleb(f))
		}
		out = append(out, sect(secFunction, vec(len(items), items...))...)
	}
	if m.table > 0 {
		out = append(out, sect(4, cat([]byte{1, tFuncref, 0}, uleb(m.table)))...)
	}
	if m.memory {
		out = append(out, sect(5, []byte{1, 0, 1})...)
	}
	if len(m.globals) > 0 {
		var items [][]byte
		for _, g := range m.globals {
			mut := byte(0)
			if g.mut {
				mut = 1
			}
			items = append(items, cat([]byte{g.typ, mut}, g.init, []byte{opEnd}))
		}
		out = append(out, sect(secGlobal, vec(len(items), items...))...)
	}
	if len(m.exports) > 0 {
		var items [][]byte
		for _, e := range m.exports {
			items = append(items, cat(str(e.name), []byte{e.kind}, uleb(e.idx)))
		}
		out = append(out, sect(secExport, vec(len(items), items...))...)
	}
	if m.start != nil {
		out = append(out, sect(secStart, uleb(*m.start))...)
	}
	if len(m.elements) > 0 {
		out = append(out, sect(secElement, vec(len(m.elements), m.elements...))...)
	}
	if len(m.bodies) > 0 {
		var items [][]byte
		for i, b := range m.bodies {
			locals := []byte{0}
			if i < len(m.locals) && m.locals[i] != nil {
				locals = m.locals[i]
			}
			body := cat(locals, b, []byte{opEnd})
			items = append(items, cat(uleb(uint32(len(body))), body))
		}
		out = append(out, sect(secCode, vec(len(items), items...))...)
	}
	if m.names != nil {
		out = append(out, sect(secCustom, cat(str("name"), m.names))...)
	}
	return out
}

package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// nativeRecursionWasm is a hand-assembled module (no toolchain involved)
// whose plasm_ping recurses through real wasm calls without bound when the
// message is 7 bytes long ("hostile"), so what stops it is the runtime's
// own call-stack guard, not a guest allocator as with the Go-built
// recurse guest. Other messages are echoed: input lives at 1024 and byte
// 1023 stays zero, so the envelope is memory[1023 : 1024+n].
func nativeRecursionWasm() []byte {
	section := func(id byte, body ...byte) []byte {
		return append([]byte{id, byte(len(body))}, body...) // every body here is < 128 bytes
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	fn := func(code ...byte) []byte { return append([]byte{byte(len(code) + 1), 0x00}, code...) }
	const (
		i32, i64 = 0x7f, 0x7e
	)
	var exports []byte
	exports = append(exports, 4)
	exports = append(append(exports, name("memory")...), 0x02, 0)
	exports = append(append(exports, name("plasm_abi_version")...), 0x00, 0)
	exports = append(append(exports, name("plasm_alloc")...), 0x00, 1)
	exports = append(append(exports, name("plasm_ping")...), 0x00, 2)

	var code []byte
	code = append(code, 4)
	code = append(code, fn(0x41, 0x01, 0x0b)...)       // plasm_abi_version: 1
	code = append(code, fn(0x41, 0x80, 0x08, 0x0b)...) // plasm_alloc: 1024
	code = append(code, fn(                            // plasm_ping(n)
		0x20, 0x00, 0x41, 0x07, 0x46, // n == 7
		0x04, i64, // if (result i64)
		0x41, 0x00, 0x10, 0x03, 0xad, //   deep(0), widened
		0x05,                               // else
		0x42, 0xff, 0x07, 0x42, 0x20, 0x86, //   1023 << 32
		0x20, 0x00, 0x41, 0x01, 0x6a, 0xad, 0x84, //   | (n + 1)
		0x0b, 0x0b)...)
	code = append(code, fn(0x20, 0x00, 0x41, 0x01, 0x6a, 0x10, 0x03, 0x41, 0x01, 0x6a, 0x0b)...) // deep(x) = deep(x+1) + 1

	var m []byte
	m = append(m, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00)
	m = append(m, section(1, 3, 0x60, 0, 1, i32, 0x60, 1, i32, 1, i32, 0x60, 1, i32, 1, i64)...)
	m = append(m, section(3, 4, 0, 1, 2, 1)...)
	m = append(m, section(5, 1, 0x00, 2)...)
	m = append(m, section(7, exports...)...)
	m = append(m, section(10, code...)...)
	return m
}

func TestNativeStackOverflow(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	m, err := testHost.Module(ctx, nativeRecursionWasm())
	if err != nil {
		t.Fatal(err)
	}
	if !m.Metered {
		t.Fatal("not metered")
	}
	// The overflow must trap, not time out: under -race on a loaded machine
	// it takes longer than the default deadline, so give it one it cannot
	// reach.
	tn := testHost.Tenant(t.Name(), TenantSpec{Module: m, Limits: Limits{CallTimeout: 5 * time.Minute}})
	defer tn.Close()
	if got, err := tn.Ping(ctx, []byte("ok")); err != nil || string(got) != "ok" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	_, err = tn.Ping(ctx, []byte("hostile"))
	t.Log(err)
	var ce *CallError
	if !errors.Is(err, ErrTrap) || !errors.As(err, &ce) || !strings.Contains(ce.Detail, "stack overflow") {
		t.Fatalf("err = %v, want ErrTrap for a stack overflow", err)
	}
	if s := tn.Stats(); s.Discarded != 1 || s.Live != 0 {
		t.Fatalf("stats %+v: the overflowed instance must be discarded", s)
	}
	if got, err := tn.Ping(ctx, []byte("after")); err != nil || string(got) != "after" {
		t.Fatalf("next call: %q, %v", got, err)
	}
}

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// TestImportInTableRefused: the second review's three ways of putting a
// host import in a table, out of the meter's sight, so call_indirect to a
// sleeping import is not followed by emptying the fuel and the guest runs
// for hours past its deadline. Screen reads ref.null's heap type and a
// table's type as wazero does and refuses both forms, so the module is
// refused, or (if it ever loads) stops at its deadline.
func TestImportInTableRefused(t *testing.T) {
	checkNoLeaks(t)
	for _, tc := range []struct {
		name                 string
		viaGlobal, tableInit bool
	}{{"element", false, false}, {"global", true, false}, {"table-init", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mod, err := testHost.Module(ctx, importInTable(t, tc.viaGlobal, tc.tableInit))
			if err != nil {
				t.Logf("refused: %v", err)
				return
			}
			tn := testHost.Tenant(t.Name(), TenantSpec{Module: mod, Limits: Limits{CallTimeout: 100 * time.Millisecond}})
			defer tn.Close()
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if _, err := tn.Ping(cctx, []byte("hostile")); !errors.Is(err, ErrDeadline) || cctx.Err() != nil {
				t.Fatalf("metered=%v: err = %v, want ErrDeadline from the 100 ms call timeout", mod.Metered, err)
			}
		})
	}
}

// importInTable builds the sleeper of TestMeteredSleeperStops calling
// poll_oneoff through a table, with the import put there one of three ways
// the second review found (an element expression after a ref.null whose
// heap type wazero reads as a LEB128 index, the same in a global, a table
// initialiser expression).
func importInTable(t *testing.T, viaGlobal, tableInit bool) []byte {
	spin := bytes.Replace(sleepLoop, []byte{0x10, 0x00, 0x1a}, []byte{0x41, 0x01, 0x11, 0x05, 0x00, 0x1a}, 1)
	if viaGlobal {
		spin = append([]byte{0x41, 0x01, 0x23, 0x01, 0x26, 0x00}, spin...) // table[1] = global 1
	}
	base := meterGuestWasmWith(spin, false, true)
	// insert table section (4) before memory (5) and element section (9) before code (10)
	mem := []byte{0x05, 0x03, 0x01, 0x00, 0x02}
	i := bytes.Index(base, mem)
	if i < 0 {
		t.Fatal("no memory section")
	}
	table := []byte{0x04, 0x04, 0x01, 0x70, 0x00, 0x03}
	if tableInit {
		table = []byte{0x04, 0x09, 0x01, 0x40, 0x00, 0x70, 0x00, 0x03, 0xd2, 0x00, 0x0b}
	}
	m := append(append(append([]byte{}, base[:i]...), table...), base[i:]...)
	if viaGlobal {
		glob := []byte{0x06,
			0x70, 0x00, 0xd0, 0x80, 0x44, 0x0b, // W0 funcref ref.null (type 8704)
			0x70, 0x00, 0xd2, 0x00, 0x0b, // W1 funcref ref.func 0 = WASI poll_oneoff
			0x70, 0x00, 0xd0, 0x80, 0x43, 0x0b, // W2 funcref ref.null (type 8576)
			0x7c, 0x00, 0x44, 0x0b, 0x7f, 0x00, 0x0b, 0x7f, 0x00, 0x0b, 0x7f, 0x0b, // W3 f64
			0x70, 0x00, 0xd0, 0x80, 0x43, 0x0b, // W4 funcref ref.null (type 8576)
			0x7c, 0x00, 0x44, 0x0b, 0x7f, 0x00, 0x0b, 0x7f, 0x00, 0x01, 0x01, 0x0b, // W5 f64
		}
		k := bytes.Index(m, mem) + len(mem)
		sec := append([]byte{0x06, byte(len(glob))}, glob...)
		m = append(append(append([]byte{}, m[:k]...), sec...), m[k:]...)
	}
	elem := []byte{0x01, 0x04, 0x41, 0x00, 0x0b, 0x03,
		0xd0, 0x80, 0x11, 0x0b,
		0xd2, 0x00, 0x0b,
		0xd0, 0x80, 0x0b, 0x0b}
	// code section is the last one
	pos := 8
	for pos < len(m) {
		id := m[pos]
		size, n := 0, 0
		for shift := 0; ; shift += 7 {
			b := m[pos+1+n]
			size |= int(b&0x7f) << shift
			n++
			if b < 0x80 {
				break
			}
		}
		if id == 10 {
			break
		}
		pos += 1 + n + size
	}
	sec := append([]byte{0x09, byte(len(elem))}, elem...)
	if viaGlobal || tableInit {
		sec = nil
	}
	m = append(append(append([]byte{}, m[:pos]...), sec...), m[pos:]...)

	return m
}

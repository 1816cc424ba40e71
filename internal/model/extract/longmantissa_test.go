package extract

import (
	"strings"
	"testing"

	"github.com/plasmd/plasmd/guest/abi"
)

// The exponent clamp must not ignore a mantissa longer than maxExponent
// digits: 1 followed by 1048580 zeros, times 10^-1048581, is 0.1, and
// times 10^-1048580 is 1.
func TestDecimalIntegerLongMantissa(t *testing.T) {
	long := "1" + strings.Repeat("0", 1048580)
	if _, _, integral := decimalInteger(long + "e-1048581"); integral {
		t.Errorf("0.1 (written with a %d-digit mantissa) judged integral", len(long))
	}
	if i, fits, integral := decimalInteger(long + "e-1048580"); !integral || !fits || i != 1 {
		t.Errorf("1 (long mantissa) -> %d fits=%v integral=%v", i, fits, integral)
	}
	if i, fits, integral := decimalInteger(long + "e-1048576"); !integral || !fits || i != 10000 {
		t.Errorf("10000 (long mantissa) -> %d fits=%v integral=%v", i, fits, integral)
	}
}

// End to end: an integer cell written with a long mantissa decodes to its value.
func TestApplyLongMantissaInteger(t *testing.T) {
	body := `{"items":[{"id":1` + strings.Repeat("0", 1048580) + `e-1048580}]}` // id = 1
	out, aerr := Apply(okSpec(), &abi.DecodeRequest{Capability: "list", Status: 200}, []byte(body), Options{})
	if aerr != nil {
		t.Fatal(aerr)
	}
	if got := out.Table.Rows[0][0]; got != int64(1) {
		t.Errorf("integer cell for a body value of 1 = %#v", got)
	}
}

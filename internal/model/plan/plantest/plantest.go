// Package plantest holds the check the plan wire form promises, shared by
// the tests of every package that produces plans (the codec's own tests,
// the planner's goldens, the language matrix).
package plantest

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// WireRoundTrip reports whether p crosses the binary wire form exactly as
// it crosses JSON to a host: DecodeBinary(AppendBinary(p)) must deep-equal
// abi.Unmarshal(AppendJSON(p)) (the host's JSON decoding, numbers as
// json.Number). A plan the binary form declines (plan.ErrWireUnencodable)
// passes, since the engine sends it as JSON.
func WireRoundTrip(p *plan.Plan) error {
	var want plan.Plan
	if err := abi.Unmarshal(p.AppendJSON(nil), &want); err != nil {
		return fmt.Errorf("JSON round trip: %w", err)
	}
	b, err := p.AppendBinary([]byte("prefix"))
	if errors.Is(err, plan.ErrWireUnencodable) {
		return nil
	}
	if err != nil {
		return err
	}
	if string(b[:6]) != "prefix" {
		return fmt.Errorf("AppendBinary overwrote the bytes before it")
	}
	got, err := plan.DecodeBinary(b[6:])
	if err != nil {
		return fmt.Errorf("decode binary: %w", err)
	}
	if !reflect.DeepEqual(got, &want) {
		return fmt.Errorf("binary round trip differs from JSON's:\n got %#v\nwant %#v", got, &want)
	}
	return nil
}

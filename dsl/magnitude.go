package dsl

import (
	"errors"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Exponent bounds of a 64-bit float in big.Float's convention (x = mant *
// 2^exp with 0.5 <= |mant| < 1): about 1.8e308 at the top, 4.9e-324 (the
// smallest subnormal) at the bottom.
const (
	maxFloatExp = 1024
	minFloatExp = -1073
)

var errFound = errors.New("found")

// FindOutOfRange returns the path to the first known number in v that a
// 64-bit float cannot hold: infinite, beyond about ±1.8e308, or a non-zero
// closer to zero than about 4.9e-324. HCL numbers are arbitrary-precision,
// but plans, state and plugins carry them as JSON and msgpack, and writing
// out 1e10000000 digit by digit takes minutes.
func FindOutOfRange(v cty.Value) (cty.Path, bool) {
	var found cty.Path
	err := cty.Walk(v, func(p cty.Path, v cty.Value) (bool, error) {
		v, _ = v.Unmark()
		if v.Type() != cty.Number || !v.IsKnown() || v.IsNull() {
			return true, nil
		}
		if f := v.AsBigFloat(); f.IsInf() || f.Sign() != 0 && (f.MantExp(nil) > maxFloatExp || f.MantExp(nil) < minFloatExp) {
			found = append(cty.Path{}, p...)
			return false, errFound
		}
		return true, nil
	})
	return found, err != nil
}

// OutOfRangeDiagnostic reports a number FindOutOfRange found at subject.
func OutOfRangeDiagnostic(subject *hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Number out of range",
		Detail:  "This value holds a number beyond what gpuflow can carry: numbers must be finite, at most about 1.8e308 in size, and non-zero ones at least about 4.9e-324. Use a smaller number.",
		Subject: subject}
}

// checkRange reports v's first out-of-range number at subject.
func checkRange(v cty.Value, subject *hcl.Range) hcl.Diagnostics {
	if _, bad := FindOutOfRange(v); bad {
		return hcl.Diagnostics{OutOfRangeDiagnostic(subject)}
	}
	return nil
}

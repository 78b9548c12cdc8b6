package gpubench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// DTypeThresholds are GEMM thresholds by dtype, written as one number for
// every dtype or as a map by dtype.
type DTypeThresholds map[string]float64

// DecodeCty implements sdk.ValueDecoder.
func (t *DTypeThresholds) DecodeCty(v cty.Value) error {
	return decodePerKey(v, gemmDTypes, (*map[string]float64)(t))
}

// OpThresholds are collective thresholds by op, written as one number for
// every op or as a map by op.
type OpThresholds map[string]float64

// DecodeCty implements sdk.ValueDecoder.
func (t *OpThresholds) DecodeCty(v cty.Value) error {
	return decodePerKey(v, opNames(), (*map[string]float64)(t))
}

// AnyThresholds are figures by any key, as a hardware profile's tflops.
type AnyThresholds map[string]float64

// DecodeCty implements sdk.ValueDecoder.
func (t *AnyThresholds) DecodeCty(v cty.Value) error {
	return decodePerKey(v, nil, (*map[string]float64)(t))
}

// decodePerKey reads one number for every key of allowed, or a map or
// object by key, keys among allowed unless it is nil; null entries are
// left out. With allowed nil the keys are open, so one number cannot
// stand for all of them and is refused.
func decodePerKey(v cty.Value, allowed []string, out *map[string]float64) error {
	m := map[string]float64{}
	if v.Type() == cty.Number && allowed != nil {
		f, _ := v.AsBigFloat().Float64()
		for _, k := range allowed {
			m[k] = f
		}
		*out = m
		return nil
	}
	if !v.Type().IsMapType() && !v.Type().IsObjectType() {
		return &sdk.ValueError{Summary: "Invalid threshold", Detail: perKeyForm(allowed)}
	}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		key := k.AsString()
		if allowed != nil && !slices.Contains(allowed, key) {
			return &sdk.ValueError{Summary: "Unsupported key", Detail: fmt.Sprintf("The map has a key %q; the keys are %s.", key, strings.Join(allowed, ", "))}
		}
		if e.IsNull() {
			continue
		}
		if e.Type() != cty.Number {
			return &sdk.ValueError{Summary: "Not a number", Detail: fmt.Sprintf("The value for %s must be a number.", key)}
		}
		m[key], _ = e.AsBigFloat().Float64()
	}
	*out = m
	return nil
}

// perKeyForm says how a value by key is written.
func perKeyForm(allowed []string) string {
	if allowed == nil {
		return "The value must be a map of numbers by key."
	}
	return fmt.Sprintf("The threshold must be a number or a map by %s.", strings.Join(allowed, ", "))
}

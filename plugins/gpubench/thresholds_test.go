package gpubench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/sdk"
)

func TestDecodePerKey(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		value   cty.Value
		allowed []string
		want    map[string]float64
		// wantErr is the error's detail.
		wantErr string
	}{
		"one number for every dtype": {value: cty.NumberIntVal(600), allowed: gemmDTypes,
			want: map[string]float64{"bf16": 600, "fp16": 600, "tf32": 600, "fp8": 600}},
		"map by dtype, null left out": {value: cty.ObjectVal(map[string]cty.Value{"bf16": cty.NumberIntVal(600), "fp8": cty.NullVal(cty.Number)}), allowed: gemmDTypes,
			want: map[string]float64{"bf16": 600}},
		"key not allowed": {value: cty.MapVal(map[string]cty.Value{"int4": cty.NumberIntVal(1)}), allowed: gemmDTypes,
			wantErr: `The map has a key "int4"; the keys are bf16, fp16, tf32, fp8.`},
		"string for known keys": {value: cty.StringVal("fast"), allowed: gemmDTypes,
			wantErr: "The threshold must be a number or a map by bf16, fp16, tf32, fp8."},
		"any key": {value: cty.MapVal(map[string]cty.Value{"fp4": cty.NumberIntVal(9000)}),
			want: map[string]float64{"fp4": 9000}},
		"one number for open keys": {value: cty.NumberIntVal(989),
			wantErr: "The value must be a map of numbers by key."},
		"string for open keys": {value: cty.StringVal("fast"),
			wantErr: "The value must be a map of numbers by key."},
		"not a number": {value: cty.ObjectVal(map[string]cty.Value{"bf16": cty.StringVal("fast")}),
			wantErr: "The value for bf16 must be a number."},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got map[string]float64
			err := decodePerKey(tc.value, tc.allowed, &got)
			var detail string
			if ve, ok := err.(*sdk.ValueError); ok {
				detail = ve.Detail
			} else if err != nil {
				t.Fatalf("error %v is not a *sdk.ValueError", err)
			}
			if diff := cmp.Diff(tc.wantErr, detail); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("thresholds (-want +got):\n%s", diff)
			}
		})
	}
}

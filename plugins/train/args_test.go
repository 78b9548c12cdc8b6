package train

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// withAttr returns obj with attribute name set to v.
func withAttr(obj cty.Value, name string, v cty.Value) cty.Value {
	attrs := obj.AsValueMap()
	attrs[name] = v
	return cty.ObjectVal(attrs)
}

// diagAt is what a test compares of diagnostics: summary and path.
func diagAt(diags api.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary+" at "+api.PathString(d.Path))
	}
	return out
}

// decodedBody is defaultBody as decodeArgs reads it.
func decodedBody() stageArgs {
	a := defaultArgs()
	a.Model = modelConfig{Layers: 4, Hidden: 256, FFNHidden: 768, Heads: 4, KVHeads: 2, Vocab: 1024, SeqLen: 128,
		Activation: "swiglu", Architecture: presetArchitecture, RopeTheta: presetRopeTheta, NormEps: presetNormEps}
	a.Layout = api.Layout{TP: 1, PP: 1, DP: 2, CP: 1, VP: 1, MicroBatch: 2, GlobalBatch: 8, Recompute: "none", Precision: "bf16"}
	a.Hardware = hardwareConfig{Name: "h200-x4", Nodes: 1, GPUsPerNode: 4, TFLOPS: map[string]float64{"bf16": 989, "fp8": 1979}, Multicast: true}
	a.Steps, a.LR, a.WarmupSteps, a.Seed = 5, 1e-3, 1, 7
	return a
}

// TestDecodeArgs: what a body leaves out takes its default, and a value of
// the wrong kind inside a meta-argument is an error at its path, where it
// used to read as the default.
func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	body := defaultBody(cty.StringVal("data")).value()
	model, layout, hw := body.GetAttr("model"), body.GetAttr("layout"), body.GetAttr("hardware")
	tests := map[string]struct {
		body cty.Value
		// want changes decodedBody; nil for the defaults alone, where
		// decoding stopped at a missing meta-argument.
		want  func(a *stageArgs)
		diags []string
	}{
		"a whole body": {body: body, want: func(*stageArgs) {}},
		"what the layout leaves out": {
			body: withAttr(body, "layout", cty.ObjectVal(map[string]cty.Value{"dp": n(2), "micro_batch": n(2), "global_batch": n(8)})),
			want: func(*stageArgs) {},
		},
		"nvlink multicast off": {
			body: withAttr(body, "hardware", withAttr(hw, "nvlink_multicast", cty.False)),
			want: func(a *stageArgs) { a.Hardware.Multicast = false },
		},
		"a model's layers as text": {
			body:  withAttr(body, "model", withAttr(model, "layers", cty.StringVal("four"))),
			want:  func(a *stageArgs) { a.Model.Layers = 0 },
			diags: []string{"Invalid value at model.layers"},
		},
		"a fraction of a layout degree": {
			body:  withAttr(body, "layout", withAttr(layout, "tp", cty.NumberFloatVal(1.5))),
			want:  func(a *stageArgs) { a.Layout.TP = 1 },
			diags: []string{"Invalid value at layout.tp"},
		},
		"peak TFLOPS as text": {
			body:  withAttr(body, "hardware", withAttr(hw, "tflops", cty.ObjectVal(map[string]cty.Value{"bf16": cty.StringVal("many")}))),
			want:  func(a *stageArgs) { a.Hardware.TFLOPS = map[string]float64{"bf16": 0} },
			diags: []string{`Invalid value at hardware.tflops["bf16"]`},
		},
		"no model": {
			body:  withAttr(body, "model", cty.NullVal(cty.DynamicPseudoType)),
			diags: []string{"Invalid model at model"},
		},
		"a layout that is no object": {
			body:  withAttr(body, "layout", cty.StringVal("tp2")),
			diags: []string{"Invalid layout at layout"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, diags := decodeArgs(tc.body)
			if diff := cmp.Diff(tc.diags, diagAt(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			want := defaultArgs()
			if tc.want != nil {
				want = decodedBody()
				tc.want(&want)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(stageArgs{}, "Data", "ValidData")); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

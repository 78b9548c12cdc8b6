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
	a.Steps, a.LR, a.WarmupSteps, a.Seed = ptr(5.0), 1e-3, ptr(1.0), 7
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
		"validation settings": {
			body: withAttr(withAttr(body, "eval_every", n(25)), "eval_batches", n(4)),
			want: func(a *stageArgs) { a.EvalEvery, a.EvalBatches = ptr(25.0), 4 },
		},
		"gradient accumulation fusion": {
			body: withAttr(body, "layout", withAttr(layout, "grad_accumulation_fusion", cty.False)),
			want: func(a *stageArgs) { off := false; a.Layout.GradAccumFusion = &off },
		},
		"eval_every as text": {
			body:  withAttr(body, "eval_every", cty.StringVal("often")),
			want:  func(*stageArgs) {},
			diags: []string{"Invalid value at eval_every"},
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
			diags: []string{"Not a whole number at layout.tp"},
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

// TestDecodeEvalArgs: an eval stage's blocks decode with the defaults of
// what they leave out, and a threshold is read only where it is set.
func TestDecodeEvalArgs(t *testing.T) {
	t.Parallel()
	body := defaultBody(cty.StringVal("data")).value()
	generate := func(attrs map[string]cty.Value) cty.Value {
		return withAttr(body, "generate", cty.ObjectVal(attrs))
	}
	expect := cty.ObjectVal(map[string]cty.Value{"max_valid_loss": cty.NumberFloatVal(2.5), "max_perplexity": cty.NullVal(cty.Number),
		"min_accuracy": cty.NullVal(cty.Number), "min_accuracy_norm": cty.NumberFloatVal(0.5)})
	tests := map[string]struct {
		body      cty.Value
		generate  *generateArgs
		threshold map[string]float64
		diags     []string
	}{
		"no blocks": {body: body, threshold: map[string]float64{}},
		"generate's defaults": {
			body:      generate(map[string]cty.Value{"prompts": cty.StringVal("p.jsonl"), "max_new_tokens": cty.NullVal(cty.Number), "temperature": cty.NullVal(cty.Number), "top_p": cty.NullVal(cty.Number)}),
			generate:  &generateArgs{Prompts: "p.jsonl", MaxNewTokens: defaultNewToks, TopP: 1},
			threshold: map[string]float64{},
		},
		"generate as written": {
			body:      generate(map[string]cty.Value{"prompts": cty.StringVal("p.jsonl"), "max_new_tokens": n(8), "temperature": cty.NumberFloatVal(0.7), "top_p": cty.NumberFloatVal(0.9)}),
			generate:  &generateArgs{Prompts: "p.jsonl", MaxNewTokens: 8, Temperature: 0.7, TopP: 0.9},
			threshold: map[string]float64{},
		},
		"thresholds set": {body: withAttr(body, "expect", expect), threshold: map[string]float64{"max_valid_loss": 2.5, "min_accuracy_norm": 0.5}},
		"a threshold as text": {
			body:      withAttr(body, "expect", withAttr(expect, "max_perplexity", cty.StringVal("low"))),
			threshold: map[string]float64{"max_valid_loss": 2.5, "min_accuracy_norm": 0.5},
			diags:     []string{"Invalid value at expect.max_perplexity"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, diags := decodeEvalArgs(tc.body)
			if diff := cmp.Diff(tc.diags, diagAt(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.generate, got.Generate); diff != "" {
				t.Errorf("generate (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.threshold, got.Expect.thresholds()); diff != "" {
				t.Errorf("thresholds (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

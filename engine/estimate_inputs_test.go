package engine

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// TestReadEstimateInputs reads a body through a contract whose attribute
// names are the plugin's own; a value of the wrong type is an error at the
// plugin's attribute, where it used to read as zero.
func TestReadEstimateInputs(t *testing.T) {
	t.Parallel()
	contract := &api.StageContract{Estimate: &api.EstimateInputs{Work: api.WorkTrain, TrainTokens: "tokens", Steps: "iterations",
		Framework: "engine", LoRA: "adapters", GlobalBatch: "batch", CheckpointEvery: "save_every"}}
	targets := cty.ListVal([]cty.Value{cty.StringVal("q_proj"), cty.StringVal("v_proj")})
	for name, tc := range map[string]struct {
		body  map[string]cty.Value
		want  estimateInputs
		diags []string
	}{
		"every input": {
			body: map[string]cty.Value{"tokens": cty.NumberIntVal(1e9), "iterations": cty.NullVal(cty.Number), "engine": cty.StringVal("fsdp2"),
				"adapters": cty.ObjectVal(map[string]cty.Value{"rank": cty.NumberIntVal(16), "targets": targets}),
				"batch":    cty.NumberIntVal(256), "save_every": cty.NumberIntVal(100)},
			want: estimateInputs{framework: "fsdp2", lora: &estimate.LoRA{Rank: 16, Targets: []string{"q_proj", "v_proj"}},
				trainTokens: 1e9, globalBatch: 256, checkpointEvery: 100},
		},
		"a step budget, the rest unknown": {
			body: map[string]cty.Value{"iterations": cty.NumberIntVal(300), "engine": cty.UnknownVal(cty.String), "batch": cty.UnknownVal(cty.Number)},
			want: estimateInputs{trainSteps: 300},
		},
		"values of the wrong type": {
			body:  map[string]cty.Value{"engine": cty.True, "adapters": cty.StringVal("r16"), "iterations": cty.NumberIntVal(10)},
			want:  estimateInputs{trainSteps: 10},
			diags: []string{"adapters", "engine"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, diags := readEstimateInputs(contract, cty.ObjectVal(tc.body))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(estimateInputs{})); diff != "" {
				t.Errorf("inputs (-want +got):\n%s", diff)
			}
			var at []string
			for _, d := range diags {
				at = append(at, d.Path[0].(cty.GetAttrStep).Name)
			}
			slices.Sort(at)
			if diff := cmp.Diff(tc.diags, at); diff != "" {
				t.Errorf("diagnostics at (-want +got):\n%s", diff)
			}
		})
	}
}

package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// TestLayoutValueReachesPlugins: what a stage's plugin decodes from
// layout.NAME is the layout, stage layer counts included (the trainer
// places its layers by them), and an even split's value names no count,
// so stages applied before the counts existed keep their inputs.
func TestLayoutValueReachesPlugins(t *testing.T) {
	t.Parallel()
	base := layout.Layout{TP: 2, PP: 4, DP: 1, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 8, Recompute: "none", Precision: "bf16"}
	uneven := base
	uneven.FirstStageLayers, uneven.LastStageLayers = 7, 7
	for name, l := range map[string]layout.Layout{"even": base, "uneven": uneven} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := layoutValue("l", l)
			var got api.Layout
			if diags := sdk.Decode(v, &got); diags.HasErrors() {
				t.Fatal(diags)
			}
			if diff := cmp.Diff(l, got); diff != "" {
				t.Errorf("decoded layout (-want +got):\n%s", diff)
			}
			if has := v.Type().HasAttribute("first_stage_layers"); has != layout.Uneven(l) {
				t.Errorf("value names first_stage_layers: %v, want %v", has, layout.Uneven(l))
			}
		})
	}
}

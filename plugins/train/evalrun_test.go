package train

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// evalBody is an eval stage body on stageBody's hardware and model, over
// layout, that measures the loss on data/valid of the checkpoint ckpt.
func evalBody(layout map[string]cty.Value) cty.Value {
	b := defaultBody(cty.NullVal(cty.DynamicPseudoType)).value()
	l := b.GetAttr("layout").AsValueMap()
	for k, v := range layout {
		l[k] = v
	}
	l["world_size"] = n(int(num(l["tp"]) * num(l["pp"]) * num(l["dp"]) * num(l["cp"])))
	return cty.ObjectVal(map[string]cty.Value{
		"hardware": b.GetAttr("hardware"), "model": b.GetAttr("model"), "layout": cty.ObjectVal(l),
		"weights": cty.StringVal("ckpt"), "data": cty.StringVal("data/valid"), "device": cty.StringVal("cuda"),
	})
}

func num(v cty.Value) float64 {
	f, _ := v.AsBigFloat().Float64()
	return f
}

// TestEvalShardsUnderFSDP: an eval stage's layout passes to the evaluator
// whole, so fsdp = true (or zero = 3) shards the weights over its dp
// ranks; tensor, pipeline and context parallelism stay refused at the
// layout.
func TestEvalShardsUnderFSDP(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		layout      map[string]cty.Value
		procs, zero int
		fsdp        bool
		err         string
	}{
		"replicated":     {layout: map[string]cty.Value{"dp": n(2)}, procs: 2},
		"fsdp":           {layout: map[string]cty.Value{"dp": n(4), "fsdp": cty.True}, procs: 4, fsdp: true},
		"zero 3":         {layout: map[string]cty.Value{"dp": n(2), "zero": n(3)}, procs: 2, zero: 3},
		"tensor refused": {layout: map[string]cty.Value{"dp": n(2), "tp": n(2), "fsdp": cty.True}, err: "Evaluation splits no layer"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeShard(t, filepath.Join(dir, "data", "valid"))
			if err := os.MkdirAll(filepath.Join(dir, "ckpt"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "ckpt", dcpMetadata), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			run, diags := prepareEval(request(dir, evalType, "e", evalBody(tc.layout), "run-1"), Options{Python: fakePython(t)})
			if tc.err != "" {
				if !diags.HasErrors() || diags[0].Summary != tc.err || !strings.Contains(diags[0].Detail, "fsdp = true") {
					t.Fatalf("diagnostics %+v, want the error %q naming fsdp", diags, tc.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatalf("prepareEval: %+v", diags)
			}
			raw, err := os.ReadFile(run.launch.Torchrun.Config)
			if err != nil {
				t.Fatal(err)
			}
			var written evalConfig
			if err := json.Unmarshal(raw, &written); err != nil {
				t.Fatal(err)
			}
			got := []any{run.launch.Torchrun.ProcsPerNode, written.Layout.DP, written.Layout.FSDP, written.Layout.ZeRO}
			if diff := cmp.Diff([]any{tc.procs, tc.procs, tc.fsdp, tc.zero}, got); diff != "" {
				t.Errorf("ranks, and dp, fsdp and zero in config.json (-want +got):\n%s", diff)
			}
		})
	}
}

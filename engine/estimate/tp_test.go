package estimate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestAsyncTPAllReduce checks the tensor-parallel time the weight-gradient
// products hide, per micro-batch, on GPT-3 175B's layers (TP8 over one
// DGX A100's NVLink, PP8: 12 layers on the GPU, one 2,048-token
// sequence), against the collective and product times written out: off,
// nothing is hidden; on, each of the two column-parallel products (q, k,
// v: 3h wide; the MLP's first: 4h) hides its input gradient's all-reduce,
// or its reduce-scatter under sequence parallelism, up to its own
// weight-gradient time, which binds on narrow layers; under LoRA the
// frozen weights have no weight-gradient product.
func TestAsyncTPAllReduce(t *testing.T) {
	t.Parallel()
	on, off := true, false
	const tokens, layers, tp = 2048.0, 12.0, 8.0
	hw := builtinNodes("dgx-a100-80gb", 16)
	bw, lat := hw.Interconnect.BytesPerS*nvlinkBusEfficiency, hw.Interconnect.LatencyS
	rate := hw.GPU.TFLOPS["bf16"] * 1e12 * defaultGEMMEfficiency["bf16"] * architectureGEMMScale["8.0"]
	// One collective over the TP group: passes x (steps x latency + the
	// ring's share of the activation at bus bandwidth).
	collective := func(hidden, passes float64) float64 {
		return passes * ((tp-1)*lat + tokens*hidden*2*(tp-1)/tp/bw)
	}
	wgrad := func(hidden, out float64) float64 { return 2 * tokens * hidden * out / tp / rate }
	tests := map[string]struct {
		async      *bool
		sp, lora   bool
		hidden     int // the model's width; GPT-3's heads of 128
		wantHidden func(h float64) float64
		// wgradBinds: both weight-gradient products are shorter than the
		// all-reduce, so the bound is what the case checks; otherwise
		// both are longer.
		wgradBinds bool
	}{
		"off": {async: &off, hidden: 12288, wantHidden: func(float64) float64 { return 0 }},
		"megatron's default: the all-reduce hidden whole": {hidden: 12288,
			wantHidden: func(h float64) float64 { return 2 * collective(h, 2) }},
		"on with sequence parallelism: the reduce-scatter hidden whole": {async: &on, sp: true, hidden: 12288,
			wantHidden: func(h float64) float64 { return 2 * collective(h, 1) }},
		"narrow layers: each product hides its own time": {async: &on, hidden: 1024, wgradBinds: true,
			wantHidden: func(h float64) float64 { return wgrad(h, 3*h) + wgrad(h, 4*h) }},
		"under LoRA no weight gradient to hide behind": {lora: true, hidden: 12288, wantHidden: func(float64) float64 { return 0 }},
	}
	got, want := map[string]float64{}, map[string]float64{}
	for name, tc := range tests {
		in := optionsBase()
		in.Hardware = hw
		in.Model.Hidden, in.Model.FFNHidden, in.Model.Heads, in.Model.KVHeads = tc.hidden, 4*tc.hidden, tc.hidden/128, tc.hidden/128
		in.Layout.Recompute, in.Layout.SequenceParallel, in.Layout.AsyncTPAllReduce = "selective", tc.sp, tc.async
		if tc.lora {
			in.LoRA = &LoRA{Rank: 16, Targets: []string{"q", "v"}}
		}
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		var p stepParts
		j.tensorParallel(&p)
		h := float64(tc.hidden)
		if tc.wgradBinds != (wgrad(h, 4*h) < collective(h, 2)) || tc.wgradBinds == (wgrad(h, 3*h) >= collective(h, 2)) {
			t.Errorf("%s: the weight-gradient products (%.3g, %.3g s) against the all-reduce (%.3g s) do not test what the case says",
				name, wgrad(h, 3*h), wgrad(h, 4*h), collective(h, 2))
		}
		got[name] = p.tp - p.tpExposed
		want[name] = layers * tc.wantHidden(h)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
		t.Errorf("TP time hidden per micro-batch, s (-want +got):\n%s", diff)
	}
}

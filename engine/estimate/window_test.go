package estimate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSlidingWindowCountsTheWindow: a model whose sliding window is
// shorter than the sequence does attention work per token in proportion
// to the window, not the sequence, in the layers it applies to; a window
// as long as the sequence changes nothing.
func TestSlidingWindowCountsTheWindow(t *testing.T) {
	t.Parallel()
	at := func(window, layers int) *Estimate {
		in := sevenB() // 32 layers, hidden 4096, seq_len 4096
		in.Model.Window, in.Model.WindowLayers = window, layers
		e, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	full, whole, half, part := at(0, 0), at(4096, 32), at(1024, 32), at(1024, 8)
	perKey := 12.0 * 4096 // attention FLOPs per token for each key a query reads in one layer
	got := map[string]float64{"window as long as the sequence": whole.FLOPsPerToken - full.FLOPsPerToken,
		"window of 1024 in every layer": full.FLOPsPerToken - half.FLOPsPerToken,
		"window of 1024 in 8 layers":    full.FLOPsPerToken - part.FLOPsPerToken}
	want := map[string]float64{"window as long as the sequence": 0,
		"window of 1024 in every layer": perKey * 32 * (4096 - 1024),
		"window of 1024 in 8 layers":    perKey * 8 * (4096 - 1024)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FLOPs per token saved (-want +got):\n%s", diff)
	}
	if whole.StepTimeS != full.StepTimeS || !(half.StepTimeS < part.StepTimeS && part.StepTimeS < full.StepTimeS) {
		t.Errorf("step times: no window %.4f s, a window as long %.4f s, 1024 in 8 layers %.4f s, in every layer %.4f s; want equal, then falling",
			full.StepTimeS, whole.StepTimeS, part.StepTimeS, half.StepTimeS)
	}
}

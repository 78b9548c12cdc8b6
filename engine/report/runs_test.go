package report

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/runlog"
)

func TestCompareRuns(t *testing.T) {
	t.Parallel()
	in := func(cfg string) *runlog.Inputs { return &runlog.Inputs{Config: json.RawMessage(cfg)} }
	tests := map[string]struct {
		a, b                    *Run
		wantInputs, wantResults [][]string
	}{
		"a setting changed, one added, a metric moved": {
			a:           &Run{ID: "1", Inputs: in(`{"lr":0.001,"layout":{"tp":1}}`), Metrics: map[string]float64{"loss": 2}},
			b:           &Run{ID: "2", Inputs: in(`{"lr":0.002,"layout":{"tp":1},"seed":3}`), Metrics: map[string]float64{"loss": 1.5, "mfu": 0.3}},
			wantInputs:  [][]string{{"lr", "0.001", "0.002"}, {"seed", "(unset)", "3"}},
			wantResults: [][]string{{"loss", "2", "1.500", "-25.0%"}, {"mfu", "-", "0.300", "-"}},
		},
		"inputs not recorded": {
			a:           &Run{ID: "1", Metrics: map[string]float64{}},
			b:           &Run{ID: "2", Inputs: in(`{}`), Metrics: map[string]float64{}},
			wantInputs:  [][]string{{"(not recorded)", "not recorded", "recorded"}},
			wantResults: nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inputs, results := CompareRuns(tc.a, tc.b)
			if diff := cmp.Diff(tc.wantInputs, inputs.Rows); diff != "" {
				t.Errorf("inputs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResults, results.Rows); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

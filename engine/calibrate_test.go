package engine

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

func TestCalibratorFilesMeasurements(t *testing.T) {
	t.Parallel()
	hw, err := hardware.Builtin("h200-x1")
	if err != nil {
		t.Fatal(err)
	}
	shape, _ := model.Preset("llama3.2-1b")
	lay := layout.Layout{TP: 1, PP: 1, DP: 1, CP: 1, VP: 1, MicroBatch: 4, GlobalBatch: 4, Recompute: "none", Precision: "bf16"}
	training := &StagePlan{Model: &StageModel{Shape: shape}, Layout: &StageLayout{Layout: lay},
		Estimate: &estimate.Estimate{Framework: "pytorch-eager"}}
	peak := hw.GPU.TFLOPS["bf16"]

	tests := map[string]struct {
		sp      *StagePlan
		outputs map[string]cty.Value
		want    *calibration.Profile
		wantErr string
	}{
		"benchmark figures": {
			sp: &StagePlan{},
			outputs: map[string]cty.Value{"calibration": cty.ObjectVal(map[string]cty.Value{
				"gemm_tflops": cty.MapVal(map[string]cty.Value{"bf16": cty.NumberFloatVal(peak * 0.75), "int4": cty.NumberIntVal(5)}),
				"busbw_gbps":  cty.ObjectVal(map[string]cty.Value{"nvlink": cty.NumberIntVal(350)}),
			})},
			want: &calibration.Profile{GEMMEfficiency: map[string]float64{"bf16": 0.75}, BusBWGBps: map[string]float64{"nvlink": 350}},
		},
		"training run": {
			sp:      training,
			outputs: map[string]cty.Value{"tokens_per_s": cty.NumberIntVal(44000), "peak_memory_bytes": cty.NumberIntVal(80 << 30)},
			want: &calibration.Profile{Runs: []calibration.Run{{Key: calibration.RunKey("pytorch-eager", "", shape, lay),
				TokensPerS: 44000, PeakMemoryBytes: 80 << 30}}},
		},
		"a LoRA run is keyed apart from a pre-train of the same shape": {
			sp: &StagePlan{Model: training.Model, Layout: training.Layout,
				Estimate: &estimate.Estimate{Framework: "pytorch-eager", Adapters: "lora r16 q,v"}},
			outputs: map[string]cty.Value{"tokens_per_s": cty.NumberIntVal(50000)},
			want: &calibration.Profile{Runs: []calibration.Run{{Key: calibration.RunKey("pytorch-eager", "lora r16 q,v", shape, lay),
				TokensPerS: 50000}}},
		},
		"figures of zero are not filed": {
			sp: training,
			outputs: map[string]cty.Value{"tokens_per_s": cty.Zero, "calibration": cty.ObjectVal(map[string]cty.Value{
				"gemm_tflops": cty.MapVal(map[string]cty.Value{"bf16": cty.Zero}),
				"busbw_gbps":  cty.MapVal(map[string]cty.Value{"nvlink": cty.NumberIntVal(-1)}),
			})},
		},
		"a calibration output of the wrong shape": {
			sp: &StagePlan{},
			outputs: map[string]cty.Value{"calibration": cty.ObjectVal(map[string]cty.Value{
				"gemm_tflops": cty.MapVal(map[string]cty.Value{"bf16": cty.StringVal("fast")}),
			})},
			wantErr: `the stage's output calibration: gemm_tflops["bf16"]: number value is required`,
		},
		"a throughput that is not a number": {
			sp:      training,
			outputs: map[string]cty.Value{"tokens_per_s": cty.StringVal("many")},
			wantErr: "the stage's outputs: tokens_per_s: number value is required",
		},
		"nothing measured": {
			sp:      training,
			outputs: map[string]cty.Value{"checkpoint": cty.StringVal("/ckpt")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "calibration.json")
			c := &calibrator{path: path}
			err := c.record(hw, tc.sp, tc.outputs)
			if got := errorText(err); got != tc.wantErr {
				t.Fatalf("record error %q, want %q", got, tc.wantErr)
			}
			f, err := calibration.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.For("h200-x1")); diff != "" {
				t.Errorf("calibration (-want +got):\n%s", diff)
			}
		})
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

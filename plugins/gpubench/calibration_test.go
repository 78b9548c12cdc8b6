package gpubench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

func TestCalibrationOutput(t *testing.T) {
	t.Parallel()
	spread := []GEMMSpread{
		{DType: "bf16", Size: 8192, MedianTFLOPS: 760},
		{DType: "bf16", Size: 16384, MedianTFLOPS: 700},
		{DType: "fp8", Size: 8192, MedianTFLOPS: 1400},
	}
	nccl := []NCCLRow{
		{Op: node.AllReduce, Bytes: 1 << 30, Ranks: 4, BusBWGBps: 350},
		{Op: node.AllReduce, Bytes: 4 << 30, Ranks: 4, BusBWGBps: 360},
		{Op: node.AllReduce, Bytes: 4 << 30, Ranks: 4, InPlace: true, BusBWGBps: 380},
		{Op: node.AllGather, Bytes: 8 << 30, Ranks: 4, BusBWGBps: 340},
	}
	tests := map[string]struct {
		res          *Results
		interconnect string
		wantGEMM     map[string]float64
		wantBusBW    map[string]float64
	}{
		"largest sizes, out of place": {
			res: &Results{GEMMSpread: spread, NCCL: nccl}, interconnect: "nvlink4",
			wantGEMM: map[string]float64{"bf16": 700, "fp8": 1400}, wantBusBW: map[string]float64{"nvlink": 360},
		},
		"wrong elements drop the figure": {
			res:          &Results{NCCL: []NCCLRow{{Op: node.AllReduce, Bytes: 1 << 20, Ranks: 2, BusBWGBps: 30, Wrong: 1}}},
			interconnect: "nvlink4", wantGEMM: map[string]float64{}, wantBusBW: map[string]float64{},
		},
		"one GPU has no link to calibrate": {
			res:          &Results{NCCL: []NCCLRow{{Op: node.AllReduce, Bytes: 1 << 20, Ranks: 1, BusBWGBps: 0}}},
			interconnect: "nvlink4", wantGEMM: map[string]float64{}, wantBusBW: map[string]float64{},
		},
		"unknown interconnect": {
			res: &Results{NCCL: nccl}, interconnect: "none",
			wantGEMM: map[string]float64{}, wantBusBW: map[string]float64{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := calibrationOutput(tc.res, tc.interconnect)
			if diff := cmp.Diff(tc.wantGEMM, floats(v.GetAttr("gemm_tflops"))); diff != "" {
				t.Errorf("gemm_tflops (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBusBW, floats(v.GetAttr("busbw_gbps"))); diff != "" {
				t.Errorf("busbw_gbps (-want +got):\n%s", diff)
			}
		})
	}
}

func floats(v cty.Value) map[string]float64 {
	out := map[string]float64{}
	for k, e := range v.AsValueMap() {
		out[k], _ = e.AsBigFloat().Float64()
	}
	return out
}

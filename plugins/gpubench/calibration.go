package gpubench

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// calibrationOutput is the stage's "calibration" output, which gpuflow
// files per hardware profile so later plans estimate with measured
// figures: per dtype, the node-median GEMM TFLOP/s at the largest size
// measured, and the all_reduce bus bandwidth at the largest size on the
// link the node's GPUs share. Figures from a check that counted wrong
// elements are left out.
func calibrationOutput(res *Results, interconnectKind string) cty.Value {
	gemm := map[string]cty.Value{}
	largest := map[string]int{}
	for _, s := range res.GEMMSpread {
		if s.Size >= largest[s.DType] && s.MedianTFLOPS > 0 {
			largest[s.DType] = s.Size
			gemm[s.DType] = cty.NumberFloatVal(s.MedianTFLOPS)
		}
	}
	busbw := map[string]cty.Value{}
	if link := linkKind(interconnectKind); link != "" {
		if bw, ok := largestAllReduce(res.NCCL); ok {
			busbw[link] = cty.NumberFloatVal(bw)
		}
	}
	return cty.ObjectVal(map[string]cty.Value{
		"gemm_tflops": mapOrEmpty(gemm),
		"busbw_gbps":  mapOrEmpty(busbw),
	})
}

// largestAllReduce is the best out-of-place all_reduce busbw at the
// largest size, if every row of that size was exact.
func largestAllReduce(rows []NCCLRow) (float64, bool) {
	var size int64
	for _, r := range rows {
		if r.Op == node.AllReduce && r.Ranks > 1 && r.Bytes > size {
			size = r.Bytes
		}
	}
	best := 0.0
	for _, r := range rows {
		if r.Op != node.AllReduce || r.Bytes != size || r.Ranks < 2 || r.InPlace {
			continue
		}
		if r.Wrong > 0 {
			return 0, false
		}
		best = max(best, r.BusBWGBps)
	}
	return best, best > 0
}

// linkKind names the calibration link for a profile's interconnect kind.
func linkKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "nvlink"):
		return "nvlink"
	case kind == "pcie":
		return "pcie"
	}
	return ""
}

func mapOrEmpty(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return cty.MapValEmpty(cty.Number)
	}
	return cty.MapVal(m)
}

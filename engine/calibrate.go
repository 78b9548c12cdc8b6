package engine

import (
	"fmt"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/hardware"
)

// Stage outputs the engine files into the calibration file when a stage
// succeeds, so later plans of the same hardware use measured figures:
//
//   - calibration = { gemm_tflops = { bf16 = 740, ... }, busbw_gbps = { nvlink = 350, ... } }
//     from benchmark stages: achieved dense TFLOP/s per precision (turned
//     into a fraction of the profile's datasheet peak) and nccl-tests bus
//     bandwidth of large all-reduces per link kind (nvlink, pcie, network);
//   - tokens_per_s and peak_memory_bytes from training stages, filed under
//     the stage's framework, model and layout.
const (
	outputCalibration     = "calibration"
	outputTokensPerS      = "tokens_per_s"
	outputPeakMemoryBytes = "peak_memory_bytes"
	calibrationGEMMTFLOPS = "gemm_tflops"
	calibrationBusBWGBps  = "busbw_gbps"
)

// calibrator serialises updates of one calibration file.
type calibrator struct {
	path string
	mu   sync.Mutex
}

// record files what a succeeded stage measured. Nothing to file is not an
// error; a file that cannot be updated is, but it fails no stage.
func (c *calibrator) record(hw *hardware.Profile, sp *StagePlan, outputs map[string]cty.Value) error {
	if c == nil || c.path == "" || hw == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := calibration.Load(c.path)
	if err != nil {
		return err
	}
	key := calibrationKey(hw)
	n, err := recordBenchmark(f, key, hw, outputs[outputCalibration])
	if err != nil {
		return err
	}
	m, err := recordRun(f, key, sp, outputs)
	if err != nil || n+m == 0 {
		return err
	}
	return f.Save(c.path)
}

// recordBenchmark files a benchmark's calibration object; it returns how
// many figures it filed.
func recordBenchmark(f *calibration.File, key string, hw *hardware.Profile, v cty.Value) (int, error) {
	filed := 0
	for prec, tflops := range numberMap(v, calibrationGEMMTFLOPS) {
		peak := hw.GPU.TFLOPS[prec]
		if peak <= 0 {
			continue // no datasheet figure to compare with
		}
		if err := f.RecordGEMM(key, prec, min(tflops/peak, 1)); err != nil {
			return filed, err
		}
		filed++
	}
	for link, gbps := range numberMap(v, calibrationBusBWGBps) {
		if err := f.RecordBusBW(key, link, gbps); err != nil {
			return filed, err
		}
		filed++
	}
	return filed, nil
}

// recordRun files a training stage's measured throughput and memory.
func recordRun(f *calibration.File, key string, sp *StagePlan, outputs map[string]cty.Value) (int, error) {
	if sp.Estimate == nil || sp.Model == nil || sp.Layout == nil {
		return 0, nil
	}
	tps, mem := numberOf(outputs[outputTokensPerS]), numberOf(outputs[outputPeakMemoryBytes])
	if tps <= 0 && mem <= 0 {
		return 0, nil
	}
	run := calibration.Run{Key: calibration.RunKey(sp.Estimate.Framework, sp.Estimate.Adapters, sp.Model.Shape, sp.Layout.Layout),
		TokensPerS: tps, PeakMemoryBytes: int64(mem)}
	return 1, f.RecordRun(key, run)
}

func numberOf(v cty.Value) float64 {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return 0
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

// numberMap reads attr of an object or map value as name -> number.
func numberMap(v cty.Value, attr string) map[string]float64 {
	out := map[string]float64{}
	m := attrValue(v, attr)
	if m == cty.NilVal || m.IsNull() || !m.IsKnown() || !(m.Type().IsObjectType() || m.Type().IsMapType()) {
		return out
	}
	for k, e := range m.AsValueMap() {
		if x := numberOf(e); x > 0 {
			out[k] = x
		}
	}
	return out
}

func attrValue(v cty.Value, attr string) cty.Value {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() {
		return cty.NilVal
	}
	switch {
	case v.Type().IsObjectType() && v.Type().HasAttribute(attr):
		return v.GetAttr(attr)
	case v.Type().IsMapType() && v.HasIndex(cty.StringVal(attr)).True():
		return v.Index(cty.StringVal(attr))
	}
	return cty.NilVal
}

// calibrationWarning reports a calibration file that could not be updated.
func calibrationWarning(path string, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Calibration not recorded",
		Detail: fmt.Sprintf("The stage succeeded, but its measurements could not be filed in %s: %s. Later plans keep using the figures they had.", path, err)}
}

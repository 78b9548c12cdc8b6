package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
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

// benchmarkFigures is a benchmark stage's calibration output.
type benchmarkFigures struct {
	GEMMTFLOPS map[string]float64 `cty:"gemm_tflops"`
	BusBWGBps  map[string]float64 `cty:"busbw_gbps"`
}

// runFigures are a training stage's measured outputs.
type runFigures struct {
	TokensPerS      float64 `cty:"tokens_per_s"`
	PeakMemoryBytes float64 `cty:"peak_memory_bytes"`
}

// recordBenchmark files a benchmark's calibration object; it returns how
// many figures it filed. Figures of zero or less are not measurements.
func recordBenchmark(f *calibration.File, key string, hw *hardware.Profile, v cty.Value) (int, error) {
	var figs benchmarkFigures
	if err := decodeOutput(v, "output "+outputCalibration, &figs); err != nil {
		return 0, err
	}
	filed := 0
	for prec, tflops := range figs.GEMMTFLOPS {
		peak := hw.GPU.TFLOPS[prec]
		if tflops <= 0 || peak <= 0 {
			continue // nothing measured, or no datasheet figure to compare with
		}
		if err := f.RecordGEMM(key, prec, min(tflops/peak, 1)); err != nil {
			return filed, err
		}
		filed++
	}
	for link, gbps := range figs.BusBWGBps {
		if gbps <= 0 {
			continue
		}
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
	var figs runFigures
	if err := decodeOutput(cty.ObjectVal(outputs), "outputs", &figs); err != nil {
		return 0, err
	}
	if figs.TokensPerS <= 0 && figs.PeakMemoryBytes <= 0 {
		return 0, nil
	}
	run := calibration.Run{Key: calibration.RunKey(sp.Estimate.Framework, sp.Estimate.Adapters, sp.Model.Shape, sp.Layout.Layout),
		TokensPerS: figs.TokensPerS, PeakMemoryBytes: int64(figs.PeakMemoryBytes)}
	return 1, f.RecordRun(key, run)
}

// decodeOutput reads a stage's outputs, or one of them, into target; a
// value of the wrong shape is an error that names it.
func decodeOutput(v cty.Value, name string, target any) error {
	if v == cty.NilVal {
		return nil
	}
	for _, d := range sdk.Decode(v, target) {
		if d.Severity == api.Error {
			return fmt.Errorf("the stage's %s: %s", name, strings.TrimSuffix(d.Detail, "."))
		}
	}
	return nil
}

// calibrationWarning reports a calibration file that could not be updated.
func calibrationWarning(path string, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Calibration not recorded",
		Detail: fmt.Sprintf("The stage succeeded, but its measurements could not be filed in %s: %s. Later plans keep using the figures they had.", path, err)}
}

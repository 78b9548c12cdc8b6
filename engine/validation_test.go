package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/estimate"
)

// Bars of the validation against published large runs: mean absolute
// step-time error and the largest single one, set just above what the
// estimator reaches now (5.5%; 9.2% at most but for MT-NLG,
// docs/estimator.md), so that a change that loses accuracy fails. The aim
// is 5% and 10%; the three MT-NLG rows, planned 13-16% fast for a
// per-step cost not modelled (docs/estimator.md, "Known limits"), are held
// to their own bar and keep the mean above 5%.
const (
	validationMeanError = 0.056
	validationMaxError  = 0.10
	mtnlgMaxError       = 0.165
)

// TestPublishedScaling plans every workload in testdata/validation, each a
// published training run with its layout as published, and compares the
// planned step time with the published one (its "# published_step_s = "
// line). docs/estimator.md's validation table is this test's output:
//
//	go test -v -run TestPublishedScaling ./engine/
func TestPublishedScaling(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("testdata/validation/*.hcl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no validation workloads: %v", err)
	}
	plugins := builtinPlugins(t)
	var sum, worst float64
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".hcl")
		published := publishedStep(t, path)
		e := plannedEstimate(t, path, plugins)
		rel := e.StepTimeS/published - 1
		t.Logf("| %s | %.3f s | %.3f s | %+.1f%% | %.0f / %.0f |", name, e.StepTimeS, published, 100*rel,
			e.ModelTFLOPSPerGPU, e.HardwareTFLOPSPerGPU)
		bar := validationMaxError
		if strings.HasPrefix(name, "mtnlg2022-") {
			bar = mtnlgMaxError
		}
		if math.Abs(rel) > bar {
			t.Errorf("%s: planned step %.3f s, published %.3f s (%+.1f%%), beyond %.1f%%", name, e.StepTimeS, published, 100*rel, 100*bar)
		}
		sum += math.Abs(rel)
		worst = max(worst, math.Abs(rel))
	}
	mean := sum / float64(len(paths))
	t.Logf("%d runs: mean absolute error %.1f%%, largest %.1f%%", len(paths), 100*mean, 100*worst)
	if mean > validationMeanError {
		t.Errorf("mean absolute step-time error %.1f%%, above %.0f%%", 100*mean, 100*validationMeanError)
	}
}

// publishedStep reads a validation workload's published step time.
func publishedStep(t *testing.T, path string) float64 {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# published_step_s = "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				t.Fatalf("%s: bad published_step_s %q", path, v)
			}
			return f
		}
	}
	t.Fatalf("%s: no '# published_step_s = ' line", path)
	return 0
}

// plannedEstimate plans a workload of one training stage and returns its
// estimate.
func plannedEstimate(t *testing.T, path string, plugins engine.Plugins) *estimate.Estimate {
	t.Helper()
	w, diags := engine.LoadWorkload(path, dsl.Inputs{})
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	p, diags := engine.BuildPlan(context.Background(), w, engine.PlanOptions{Plugins: plugins})
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	for _, sp := range p.Stages {
		if sp.Estimate != nil {
			return sp.Estimate
		}
	}
	t.Fatalf("%s: no training stage estimated", path)
	return nil
}

// Bars of the FSDP validation, per GPU, set just above what the estimator
// reaches now (docs/estimator.md, "FSDP runs"): the A100 runs within 6.3%
// on average, the H100 runs, planned 10-31% fast for a cost of FSDP
// across H100s the plan does not model, within 18.5%; every run within
// 31% but the one in fsdpOwnBars.
var fsdpMeanError = map[string]float64{"a100": 0.063, "h100": 0.185}

const fsdpMaxError = 0.31

// fsdpOwnBars holds the runs the plan misses by more than fsdpMaxError
// to bars of their own: MPT-70B on 64 A100 40GB at micro-batch 2 ran 276
// tokens/s per GPU where the same model on 128 of them at micro-batch 4
// ran 376, which the plan (32.7% fast) does not explain.
var fsdpOwnBars = map[string]float64{"mpt-a100-40gb-70b-s2048-64gpu-mb2-ac": 0.34}

// TestPublishedFSDP plans every workload in testdata/validation-fsdp, each
// a published FSDP training run (MosaicML's MPT benchmarks, one GPU type
// per file name: mpt-<gpu>-...), and compares the planned step time with
// the published one. docs/estimator.md's FSDP table is this test's
// output:
//
//	go test -v -run TestPublishedFSDP ./engine/
func TestPublishedFSDP(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("testdata/validation-fsdp/*.hcl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no FSDP validation workloads: %v", err)
	}
	plugins := builtinPlugins(t)
	sums, counts := map[string]float64{}, map[string]int{}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".hcl")
		gpu := strings.SplitN(strings.TrimPrefix(name, "mpt-"), "-", 2)[0]
		if _, ok := fsdpMeanError[gpu]; !ok {
			t.Fatalf("%s: no bar for GPU %q", path, gpu)
		}
		published := publishedStep(t, path)
		e := plannedEstimate(t, path, plugins)
		rel := e.StepTimeS/published - 1
		t.Logf("| %s | %.3f s | %.3f s | %+.1f%% | %.0f / %.0f |", name, e.StepTimeS, published, 100*rel,
			e.ModelTFLOPSPerGPU, e.HardwareTFLOPSPerGPU)
		bar := fsdpMaxError
		if own, ok := fsdpOwnBars[name]; ok {
			bar = own
		}
		if math.Abs(rel) > bar {
			t.Errorf("%s: planned step %.3f s, published %.3f s (%+.1f%%), beyond %.0f%%", name, e.StepTimeS, published, 100*rel, 100*bar)
		}
		sums[gpu] += math.Abs(rel)
		counts[gpu]++
	}
	for gpu, bar := range fsdpMeanError {
		mean := sums[gpu] / float64(counts[gpu])
		t.Logf("%s: %d runs, mean absolute error %.1f%%", gpu, counts[gpu], 100*mean)
		if mean > bar {
			t.Errorf("%s: mean absolute step-time error %.1f%%, above %.1f%%", gpu, 100*mean, 100*bar)
		}
	}
}

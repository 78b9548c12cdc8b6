package estimate

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestGEMMOverheadFit refits the per-product overhead from the benchmark
// plugin's square bf16 sweep on one H100 (testdata/gemm/gemm_square.txt,
// scripts/device/gemm_shapes.sh): time = 2n^3/R + t0 by least squares on
// log time over n = 1,024..16,384, a grid of R (1 TFLOP/s steps) and t0
// (0.1 us steps). It fails when gemmOverheadFLOPs drifts from the fit.
func TestGEMMOverheadFit(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/gemm/gemm_square.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type point struct{ n, seconds float64 }
	var pts []point
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 7 || fs[0] != "bf16" {
			continue
		}
		n, err1 := strconv.ParseFloat(fs[1], 64)
		ms, err2 := strconv.ParseFloat(fs[4], 64)
		if err1 == nil && err2 == nil && n >= 1024 {
			pts = append(pts, point{n, ms / 1e3})
		}
	}
	if len(pts) < 5 {
		t.Fatalf("only %d bf16 sizes from 1,024 up in the sweep", len(pts))
	}
	best, bestR, bestT0 := math.Inf(1), 0.0, 0.0
	for r := 700e12; r <= 900e12; r += 1e12 {
		for t0 := 0.0; t0 <= 20e-6; t0 += 0.1e-6 {
			var sum float64
			for _, p := range pts {
				d := math.Log((2*p.n*p.n*p.n/r + t0) / p.seconds)
				sum += d * d
			}
			if sum < best {
				best, bestR, bestT0 = sum, r, t0
			}
		}
	}
	got := bestR * bestT0
	t.Logf("R = %.0f TFLOP/s, t0 = %.2f us: overhead %.2f GFLOP (rms %.1f%%)", bestR/1e12, bestT0*1e6, got/1e9, 100*math.Sqrt(best/float64(len(pts))))
	if !within(gemmOverheadFLOPs, got, 0.05) {
		t.Errorf("gemmOverheadFLOPs = %.3g, the sweep fits %.3g", gemmOverheadFLOPs, got)
	}
}

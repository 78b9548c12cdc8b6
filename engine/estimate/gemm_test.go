package estimate

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gemmSweeps are the benchmark plugin's square sweep and PyTorch's
// rectangular one (scripts/device/gemm_shapes.sh), one folder per GPU
// under testdata/gemm. fitTolerance bounds how far the GPU's own square
// fit may put the overhead from gemmOverheadFLOPs (fitted on the H100).
var gemmSweeps = []struct {
	gpu          string
	fitTolerance float64
}{
	{gpu: "h100", fitTolerance: 0.05},
	{gpu: "h200", fitTolerance: 0.15},
}

// TestGEMMOverheadFit refits the per-product overhead from each GPU's
// square bf16 sweep: time = 2n^3/R + t0 by least squares on log time over
// n = 1,024..16,384, a grid of R (1 TFLOP/s steps) and t0 (0.1 us
// steps). Then the out-of-sample check on the rectangular products of
// transformer layers: gemmOverheadFLOPs at the GPU's fitted R must
// predict them better than R alone (a flat rate) and within a point of
// rms of the GPU's own fit, which is what carrying the overhead in FLOPs
// between GPUs of one SM count (H100 and H200: 132) claims.
func TestGEMMOverheadFit(t *testing.T) {
	t.Parallel()
	for _, sw := range gemmSweeps {
		t.Run(sw.gpu, func(t *testing.T) {
			t.Parallel()
			pts := readSquareSweep(t, filepath.Join("testdata/gemm", sw.gpu, "gemm_square.txt"))
			r, t0, rms := fitGEMMOverhead(pts)
			got := r * t0
			t.Logf("R = %.0f TFLOP/s, t0 = %.2f us: overhead %.2f GFLOP (rms %.1f%%)", r/1e12, t0*1e6, got/1e9, 100*rms)
			if !within(gemmOverheadFLOPs, got, sw.fitTolerance) {
				t.Errorf("gemmOverheadFLOPs = %.3g, the %s sweep fits %.3g", gemmOverheadFLOPs, sw.gpu, got)
			}
			rect := readRectSweep(t, filepath.Join("testdata/gemm", sw.gpu, "gemm_rect.json"))
			carried := rectRMS(rect, r, gemmOverheadFLOPs/r)
			own := rectRMS(rect, r, t0)
			flat := rectRMS(rect, r, 0)
			t.Logf("%d rectangular shapes, rms: %.1f%% with gemmOverheadFLOPs, %.1f%% with this GPU's own fit, %.1f%% at R alone",
				len(rect), 100*carried, 100*own, 100*flat)
			if carried >= flat || carried > own+0.01 {
				t.Errorf("rectangular rms %.3f with gemmOverheadFLOPs, against %.3f at R alone and %.3f with the GPU's own fit", carried, flat, own)
			}
		})
	}
}

type squarePoint struct{ n, seconds float64 }

// readSquareSweep reads the plugin's bf16 rows of sizes 1,024 and up.
func readSquareSweep(t *testing.T, path string) []squarePoint {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pts []squarePoint
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 7 || fs[0] != "bf16" {
			continue
		}
		n, err1 := strconv.ParseFloat(fs[1], 64)
		ms, err2 := strconv.ParseFloat(fs[4], 64)
		if err1 == nil && err2 == nil && n >= 1024 {
			pts = append(pts, squarePoint{n, ms / 1e3})
		}
	}
	if len(pts) < 5 {
		t.Fatalf("%s: only %d bf16 sizes from 1,024 up in the sweep", path, len(pts))
	}
	return pts
}

// fitGEMMOverhead is the least-squares R and t0 on log time, and the rms
// of the log error.
func fitGEMMOverhead(pts []squarePoint) (r, t0, rms float64) {
	best := math.Inf(1)
	for rate := 600e12; rate <= 900e12; rate += 1e12 {
		for over := 0.0; over <= 20e-6; over += 0.1e-6 {
			var sum float64
			for _, p := range pts {
				d := math.Log((2*p.n*p.n*p.n/rate + over) / p.seconds)
				sum += d * d
			}
			if sum < best {
				best, r, t0 = sum, rate, over
			}
		}
	}
	return r, t0, math.Sqrt(best / float64(len(pts)))
}

type rectPoint struct {
	M, N, K float64
	Seconds float64 `json:"time_s"`
}

// readRectSweep reads PyTorch's rectangular rows whose two widths are
// both 1,024 or more (narrower inner dimensions run slower than either
// model says; docs/benchmarks.md).
func readRectSweep(t *testing.T, path string) []rectPoint {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Rows []rectPoint }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var rows []rectPoint
	for _, r := range doc.Rows {
		if r.N >= 1024 && r.K >= 1024 && r.Seconds > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) < 100 {
		t.Fatalf("%s: only %d rectangular shapes with both widths from 1,024", path, len(rows))
	}
	return rows
}

// rectRMS is the rms relative error of time = flops/r + t0 on the rows.
func rectRMS(rows []rectPoint, r, t0 float64) float64 {
	var sum float64
	for _, p := range rows {
		d := (2*p.M*p.N*p.K/r + t0 - p.Seconds) / p.Seconds
		sum += d * d
	}
	return math.Sqrt(sum / float64(len(rows)))
}

package gpubench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuflow/gpuflow/plugins/api/stats"
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// gemmTolerance bounds ‖D−ref‖/‖ref‖ over sampled elements per dtype: the
// output's rounding (bf16 keeps 8 bits, fp16 11) plus tf32's 10-bit inputs.
var gemmTolerance = map[string]float64{"bf16": 1e-2, "fp8": 1e-2, "fp16": 5e-3, "tf32": 5e-3}

// healthFailures compares each GPU's state with the thresholds.
func healthFailures(c *HealthConfig, gpus []node.GPU, hs []node.Health, v node.Versions) []string {
	var f []string
	add := func(format string, args ...any) { f = append(f, fmt.Sprintf(format, args...)) }
	if c.GPUs > 0 && len(gpus) != c.GPUs {
		add("the node shows %d GPUs, expected %d", len(gpus), c.GPUs)
	}
	for _, h := range hs {
		g := fmt.Sprintf("GPU %d (%s)", h.GPU, h.BusID)
		if c.Model != "" && !strings.Contains(strings.ToLower(h.Name), strings.ToLower(c.Model)) {
			add("%s is %q, expected a %s", g, h.Name, c.Model)
		}
		if h.MemoryBytes < c.MinMemoryBytes {
			add("%s has %s of memory, expected at least %s", g, FormatBytes(h.MemoryBytes), FormatBytes(c.MinMemoryBytes))
		}
		if c.ECC && supported(h, "ecc_enabled") && (!h.ECCEnabled || h.ECCPendingChange) {
			add("%s has ECC %s", g, onOff(h.ECCEnabled, h.ECCPendingChange))
		}
		if int64(h.UncorrectableECCVolatile) > c.MaxUncorrectableECC {
			add("%s counts %d uncorrectable ECC errors since the driver loaded, at most %d allowed", g, h.UncorrectableECCVolatile, c.MaxUncorrectableECC)
		}
		if c.Remaps && (h.RemapPending || h.RemapFailed) {
			add("%s has a row remap %s: reset the GPU, or replace it if the remap failed", g, map[bool]string{true: "that failed", false: "pending"}[h.RemapFailed])
		}
		want := c.MinNVLinks
		if want < 0 {
			want = h.NVLinksSupported
		}
		if h.NVLinksActive < want {
			add("%s has %d of %d NVLinks up, expected %d", g, h.NVLinksActive, h.NVLinksSupported, want)
		}
		if c.PCIeFullWidth && h.PCIeWidthMax > 0 && h.PCIeWidth < h.PCIeWidthMax {
			add("%s runs PCIe x%d of x%d", g, h.PCIeWidth, h.PCIeWidthMax)
		}
		if c.PCIeFullGen && h.PCIeGenMax > 0 && h.PCIeGen < h.PCIeGenMax {
			add("%s runs PCIe gen %d of %d", g, h.PCIeGen, h.PCIeGenMax)
		}
		if c.MaxTemperatureC > 0 && h.TemperatureC > c.MaxTemperatureC {
			add("%s is at %.0f °C, above %.0f", g, h.TemperatureC, c.MaxTemperatureC)
		}
		if c.NoThermalThrottle && h.ClockEvents&node.HarmfulClockEvents != 0 {
			add("%s is slowed by %s", g, strings.Join(node.ClockEventNames(h.ClockEvents&node.HarmfulClockEvents), ", "))
		}
	}
	for _, ver := range []struct{ name, have, min string }{
		{"driver", v.Driver, c.MinDriver}, {"CUDA", v.CUDA, c.MinCUDA}, {"NCCL", v.NCCL, c.MinNCCL},
	} {
		if ver.min != "" && compareVersions(ver.have, ver.min) < 0 {
			add("%s version %q is older than %s", ver.name, ver.have, ver.min)
		}
	}
	return f
}

func supported(h node.Health, field string) bool { return !slices.Contains(h.Unsupported, field) }

func onOff(on, pending bool) string {
	s := map[bool]string{true: "on", false: "off"}[on]
	if pending {
		s += " with a mode change pending a reset"
	}
	return s
}

// compareVersions compares dotted versions numerically ("550.54.15" >
// "550.9"); a part that is not a number compares as 0, and an empty
// version is older than any other.
func compareVersions(a, b string) int {
	if a == "" {
		return -1
	}
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := versionPart(pa, i), versionPart(pb, i)
		if x != y {
			return map[bool]int{true: -1, false: 1}[x < y]
		}
	}
	return 0
}

func versionPart(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	n, _ := strconv.Atoi(parts[i])
	return n
}

// spreads computes, per dtype and size, the slowest GPU against the median.
func spreads(rows []GEMMRow) []GEMMSpread {
	type key struct {
		dtype string
		size  int
	}
	groups := map[key][]GEMMRow{}
	var order []key
	for _, r := range rows {
		k := key{r.DType, r.M}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []GEMMSpread
	for _, k := range order {
		g := groups[k]
		tf := make([]float64, len(g))
		slowest := g[0]
		for i, r := range g {
			tf[i] = r.TFLOPS
			if r.TFLOPS < slowest.TFLOPS {
				slowest = r
			}
		}
		med := stats.Median(tf)
		s := GEMMSpread{DType: k.dtype, Size: k.size, MedianTFLOPS: med, SlowestGPU: slowest.GPU, SlowestTFLOPS: slowest.TFLOPS}
		if med > 0 {
			s.SlowestVsMedian = 1 - slowest.TFLOPS/med
		}
		out = append(out, s)
	}
	return out
}

func gemmFailures(c *GEMMConfig, rows []GEMMRow, sp []GEMMSpread) []string {
	var f []string
	for _, r := range rows {
		if tol := gemmTolerance[r.DType]; !(r.RelErr <= tol) {
			f = append(f, fmt.Sprintf("GPU %d %s %d³ computed a wrong product: relative error %.3g over sampled elements, more than %.0e", r.GPU, r.DType, r.M, r.RelErr, tol))
		}
		if min, ok := c.MinTFLOPS[r.DType]; ok && r.TFLOPS < min {
			f = append(f, fmt.Sprintf("GPU %d %s %d³ ran %.1f TFLOP/s, below min_tflops %g", r.GPU, r.DType, r.M, r.TFLOPS, min))
		}
	}
	if c.MaxSlowestVsMedian > 0 {
		for _, s := range sp {
			if s.SlowestVsMedian > c.MaxSlowestVsMedian {
				f = append(f, fmt.Sprintf("GPU %d %s %d³ ran %.1f TFLOP/s, %.1f%% behind the node median %.1f, more than max_slowest_vs_median %g",
					s.SlowestGPU, s.DType, s.Size, s.SlowestTFLOPS, 100*s.SlowestVsMedian, s.MedianTFLOPS, c.MaxSlowestVsMedian))
			}
		}
	}
	return f
}

func hbmFailures(c *HBMConfig, rows []HBMRow) []string {
	var f []string
	for _, r := range rows {
		if r.Wrong != 0 {
			f = append(f, fmt.Sprintf("GPU %d: %d elements of the copy or triad came out wrong", r.GPU, r.Wrong))
		}
		if c.MinTBps > 0 && r.CopyTBps < c.MinTBps {
			f = append(f, fmt.Sprintf("GPU %d copied at %.2f TB/s, below min_tbps %g", r.GPU, r.CopyTBps, c.MinTBps))
		}
		if c.MinTriadTBps > 0 && r.TriadTBps < c.MinTriadTBps {
			f = append(f, fmt.Sprintf("GPU %d ran the triad at %.2f TB/s, below min_triad_tbps %g", r.GPU, r.TriadTBps, c.MinTriadTBps))
		}
	}
	return f
}

func p2pFailures(c *P2PConfig, rows []P2PRow) []string {
	var f []string
	for _, r := range rows {
		if r.Wrong != 0 {
			f = append(f, fmt.Sprintf("GPU %d -> GPU %d: %d words arrived wrong", r.Src, r.Dst, r.Wrong))
		}
		if c.MinGBps > 0 && r.OneWayGBps < c.MinGBps {
			f = append(f, fmt.Sprintf("GPU %d -> GPU %d copied at %.1f GB/s, below min_gbps %g", r.Src, r.Dst, r.OneWayGBps, c.MinGBps))
		}
		if c.MinBidirGBps > 0 && r.Src < r.Dst && r.BidirGBps < c.MinBidirGBps {
			f = append(f, fmt.Sprintf("GPU %d <-> GPU %d copied at %.1f GB/s both ways, below min_bidir_gbps %g", r.Src, r.Dst, r.BidirGBps, c.MinBidirGBps))
		}
	}
	return f
}

// ncclFailures checks every row's correctness and the bus bandwidth of
// each op's largest out-of-place size.
func ncclFailures(c *NCCLConfig, rows []NCCLRow) []string {
	var f []string
	largest := map[node.Op]NCCLRow{}
	for _, r := range rows {
		if r.Wrong != 0 {
			f = append(f, fmt.Sprintf("%s %s of %s (%s) left %d wrong elements", r.Op, r.DType, FormatBytes(r.Bytes), placeName(r.InPlace), r.Wrong))
		}
		if !r.InPlace && r.Bytes >= largest[r.Op].Bytes {
			largest[r.Op] = r
		}
	}
	for _, op := range c.Ops {
		r, ok := largest[op]
		min, want := c.MinBusBWGBps[string(op)]
		if ok && want && r.BusBWGBps < min {
			f = append(f, fmt.Sprintf("%s %s of %s reached a bus bandwidth of %.1f GB/s, below min_busbw_gbps %g", op, r.DType, FormatBytes(r.Bytes), r.BusBWGBps, min))
		}
	}
	return f
}

// stragglerFailures names each straggling rank, one sentence each.
func stragglerFailures(c *NCCLConfig, ss []cluster.Straggler) []string {
	var f []string
	for _, s := range ss {
		f = append(f, fmt.Sprintf("node %d GPU %d (rank %d) took %.2fx the median of all ranks for %s of %s (%s): %.1f us against %.1f us, above max_straggler_ratio %g",
			s.Node, s.GPU, s.Rank, s.Ratio, s.Op, FormatBytes(s.Bytes), placeName(s.InPlace), s.TimeS*1e6, s.MedianS*1e6, c.MaxStragglerRatio))
	}
	return f
}

func placeName(inPlace bool) string {
	if inPlace {
		return "in place"
	}
	return "out of place"
}

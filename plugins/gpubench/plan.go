package gpubench

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// details are the plan's lines: which checks run, at what sizes, against
// which thresholds.
func (cfg Config) details() []api.Detail {
	var d []api.Detail
	if cfg.Health != nil {
		d = append(d, api.Detail{Key: "health", Value: cfg.Health.describe()})
	}
	if cfg.GEMM != nil {
		d = append(d, api.Detail{Key: "gemm", Value: cfg.GEMM.describe()})
	}
	if cfg.HBM != nil {
		d = append(d, api.Detail{Key: "hbm", Value: cfg.HBM.describe()})
	}
	if cfg.P2P != nil {
		d = append(d, api.Detail{Key: "p2p", Value: cfg.P2P.describe()})
	}
	if cfg.NCCL != nil {
		d = append(d, api.Detail{Key: "nccl", Value: cfg.NCCL.describe()})
	}
	if cfg.Unknown {
		d = append(d, api.Detail{Key: "note", Value: "some settings are known only at apply; defaults shown in their place"})
	}
	return d
}

func (c *HealthConfig) describe() string {
	var parts []string
	if c.GPUs > 0 {
		parts = append(parts, fmt.Sprintf("%d GPUs", c.GPUs))
	}
	if c.Model != "" {
		parts = append(parts, "model "+c.Model)
	}
	if c.MinMemoryBytes > 0 {
		parts = append(parts, "memory >= "+FormatBytes(c.MinMemoryBytes))
	}
	if c.ECC {
		parts = append(parts, "ECC on")
	}
	parts = append(parts, fmt.Sprintf("uncorrectable ECC <= %d", c.MaxUncorrectableECC))
	if c.Remaps {
		parts = append(parts, "no pending or failed row remap")
	}
	switch {
	case c.MinNVLinks < 0:
		parts = append(parts, "every NVLink up")
	case c.MinNVLinks > 0:
		parts = append(parts, fmt.Sprintf(">= %d NVLinks up", c.MinNVLinks))
	}
	if c.PCIeFullWidth {
		parts = append(parts, "PCIe at full width")
	}
	if c.PCIeFullGen {
		parts = append(parts, "PCIe at full generation")
	}
	parts = append(parts, fmt.Sprintf("<= %g °C", c.MaxTemperatureC))
	if c.NoThermalThrottle {
		parts = append(parts, "no thermal or power-brake slowdown")
	}
	for _, v := range []struct{ name, min string }{{"driver", c.MinDriver}, {"CUDA", c.MinCUDA}, {"NCCL", c.MinNCCL}} {
		if v.min != "" {
			parts = append(parts, v.name+" >= "+v.min)
		}
	}
	pre := []string{"CPU affinity"}
	if c.MinPortRange > 0 {
		pre = append(pre, fmt.Sprintf(">= %d ephemeral ports", c.MinPortRange))
	}
	if c.NCCLEnv {
		pre = append(pre, "NCCL_* sanity")
	}
	return strings.Join(parts, ", ") + "; preflight: " + strings.Join(pre, ", ")
}

func (c *GEMMConfig) describe() string {
	var sizes []string
	for _, s := range c.Sizes {
		sizes = append(sizes, fmt.Sprintf("%d³", s))
	}
	s := fmt.Sprintf("%s at %s; best of %d cuBLASLt candidates, fastest of %d runs of %d timed after %gs idle and %d warm-up (%gs at least)",
		strings.Join(c.DTypes, ", "), strings.Join(sizes, ", "), c.TopK, c.Repeats, c.Iters, c.RestSeconds, c.Warmup, c.WarmupSeconds)
	var expect []string
	for _, dt := range c.DTypes {
		if min, ok := c.MinTFLOPS[dt]; ok {
			expect = append(expect, fmt.Sprintf("%s >= %g TFLOP/s", dt, min))
		}
	}
	if c.MaxSlowestVsMedian > 0 {
		expect = append(expect, fmt.Sprintf("slowest GPU within %g%% of the median", 100*c.MaxSlowestVsMedian))
	}
	return s + expectSuffix(expect)
}

func (c *HBMConfig) describe() string {
	var expect []string
	if c.MinTBps > 0 {
		expect = append(expect, fmt.Sprintf("copy >= %.4g TB/s", c.MinTBps))
	}
	if c.MinTriadTBps > 0 {
		expect = append(expect, fmt.Sprintf("triad >= %.4g TB/s", c.MinTriadTBps))
	}
	return fmt.Sprintf("copy of %s and triad, %d timed after %d warm-up", FormatBytes(c.Bytes), c.Iters, c.Warmup) + expectSuffix(expect)
}

func (c *P2PConfig) describe() string {
	var expect []string
	if c.MinGBps > 0 {
		expect = append(expect, fmt.Sprintf("one-way >= %g GB/s", c.MinGBps))
	}
	if c.MinBidirGBps > 0 {
		expect = append(expect, fmt.Sprintf("both ways >= %g GB/s", c.MinBidirGBps))
	}
	return fmt.Sprintf("every GPU pair, %s copies one way and both ways", FormatBytes(c.Bytes)) + expectSuffix(expect)
}

func (c *NCCLConfig) describe() string {
	var ops []string
	for _, o := range c.Ops {
		ops = append(ops, string(o))
	}
	place := "out of place"
	if c.InPlace {
		place = "out of place and in place"
	}
	s := fmt.Sprintf("%s %s, %s to %s x%d, %s, %d timed (%gs at least) after %d warm-up, timeout %s",
		strings.Join(ops, ", "), c.DType, FormatBytes(c.MinBytes), FormatBytes(c.MaxBytes), c.Factor, place, c.Iters, c.MinSeconds, c.Warmup, c.Timeout)
	var expect []string
	for _, op := range slices.Sorted(maps.Keys(c.MinBusBWGBps)) {
		if slices.Contains(ops, op) {
			expect = append(expect, fmt.Sprintf("%s busbw >= %g GB/s at the largest size", op, c.MinBusBWGBps[op]))
		}
	}
	return s + expectSuffix(expect)
}

func expectSuffix(expect []string) string {
	if len(expect) == 0 {
		return "; no thresholds"
	}
	return "; expect " + strings.Join(expect, ", ")
}

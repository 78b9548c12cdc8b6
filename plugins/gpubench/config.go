package gpubench

import (
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// Config is a decoded benchmark stage body; a nil check is not run.
type Config struct {
	Hardware Hardware
	LibDirs  []string
	Health   *HealthConfig
	GEMM     *GEMMConfig
	HBM      *HBMConfig
	P2P      *P2PConfig
	NCCL     *NCCLConfig
	// Unknown is set when some value is known only at apply time (the
	// defaults stand in for it).
	Unknown bool
}

// HealthConfig holds health's thresholds, defaults resolved.
type HealthConfig struct {
	GPUs                int    // 0: not checked
	Model               string // "": not checked
	MinMemoryBytes      int64
	ECC                 bool
	MaxUncorrectableECC int64
	Remaps              bool
	MinNVLinks          int // -1: every link the GPU has
	PCIeFullWidth       bool
	PCIeFullGen         bool
	MaxTemperatureC     float64
	NoThermalThrottle   bool
	MinDriver           string
	MinCUDA             string
	MinNCCL             string
	MinPortRange        int
	NCCLEnv             bool
}

// GEMMConfig is the GEMM check.
type GEMMConfig struct {
	DTypes             []string
	Sizes              []int
	TopK               int
	Warmup, Iters      int
	WarmupSeconds      float64
	RestSeconds        float64
	Repeats            int
	WorkspaceBytes     int64
	MinTFLOPS          map[string]float64
	MaxSlowestVsMedian float64 // 0: not checked
}

// HBMConfig is the memory bandwidth check.
type HBMConfig struct {
	Bytes         int64
	Warmup, Iters int
	MinTBps       float64
	MinTriadTBps  float64
}

// P2PConfig is the peer copy check.
type P2PConfig struct {
	Bytes         int64
	Warmup, Iters int
	MinGBps       float64
	MinBidirGBps  float64
}

// NCCLConfig is the collectives check.
type NCCLConfig struct {
	Ops                []node.Op
	DType              string
	MinBytes, MaxBytes int64
	Factor             int
	InPlace            bool
	Warmup, Iters      int
	MinSeconds         float64
	Timeout            time.Duration
	MinBusBWGBps       map[string]float64
	// MaxStragglerRatio is how much slower than the median of all ranks a
	// rank may be, in a job of several nodes.
	MaxStragglerRatio float64
}

// Sizes lists the sweep: min_bytes, times factor, up to max_bytes.
func (c *NCCLConfig) Sizes() []int64 {
	var out []int64
	for s := c.MinBytes; s <= c.MaxBytes; s *= int64(c.Factor) {
		out = append(out, s)
	}
	return out
}

// GEMM dtypes, in the order they run.
var gemmDTypes = []string{"bf16", "fp16", "tf32", "fp8"}

func opNames() []string {
	var out []string
	for _, o := range node.Ops {
		out = append(out, string(o))
	}
	return out
}

// DecodeConfig reads a stage body decoded with the stage schema.
func DecodeConfig(v cty.Value) (Config, api.Diagnostics) {
	var diags api.Diagnostics
	cfg := Config{}
	b := body{v: v, diags: &diags, unknown: &cfg.Unknown}
	cfg.Hardware = decodeHardware(b)
	cfg.LibDirs = b.strings("lib_dirs", nil, nil)
	if h, ok := b.block("health"); ok {
		cfg.Health = decodeHealth(h, cfg.Hardware)
	}
	if g, ok := b.block("gemm"); ok {
		cfg.GEMM = decodeGEMM(g)
	}
	if m, ok := b.block("hbm"); ok {
		cfg.HBM = decodeHBM(m)
	}
	if p, ok := b.block("p2p"); ok {
		cfg.P2P = decodeP2P(p)
	}
	if n, ok := b.block("nccl"); ok {
		cfg.NCCL = decodeNCCL(n)
	}
	if cfg.Health == nil && cfg.GEMM == nil && cfg.HBM == nil && cfg.P2P == nil && cfg.NCCL == nil && !cfg.Unknown {
		diags = append(diags, api.Diagnostic{
			Severity: api.Warning, Summary: "No check",
			Detail: "The stage names none of health, gemm, hbm, p2p and nccl, so it checks nothing; add at least one block.",
		})
	}
	return cfg, diags
}

func decodeHealth(h body, hw Hardware) *HealthConfig {
	e, _ := h.block("expect")
	c := &HealthConfig{
		GPUs:                e.count("gpus", hw.GPUsPerNode, 1),
		Model:               e.str("model", hw.modelWord()),
		ECC:                 e.boolean("ecc", true),
		MaxUncorrectableECC: int64(e.count("max_uncorrectable_ecc", 0, 0)),
		Remaps:              e.boolean("remaps", true),
		MinNVLinks:          e.count("min_nvlinks", hw.defaultNVLinks(), 0),
		PCIeFullWidth:       e.boolean("pcie_full_width", true),
		PCIeFullGen:         e.boolean("pcie_full_gen", false),
		NoThermalThrottle:   e.boolean("no_thermal_throttle", true),
		MinDriver:           e.str("min_driver_version", ""),
		MinCUDA:             e.str("min_cuda_version", ""),
		MinNCCL:             e.str("min_nccl_version", ""),
		MinPortRange:        e.count("min_port_range", 16384, 0),
		NCCLEnv:             e.boolean("nccl_env", true),
	}
	c.MinMemoryBytes, _ = e.bytes("min_memory_bytes", hw.GPUMemoryBytes*97/100)
	c.MaxTemperatureC, _ = e.float("max_temperature_c", 85)
	return c
}

func decodeGEMM(g body) *GEMMConfig {
	c := &GEMMConfig{
		DTypes: g.strings("dtypes", gemmDTypes, gemmDTypes),
		Sizes:  g.sizes("sizes", []int{8192, 16384}),
		TopK:   g.count("top_k", 8, 1),
		Warmup: g.count("warmup", 5, 0),
		Iters:  g.count("iters", 50, 1),
	}
	c.WorkspaceBytes, _ = g.bytes("workspace_bytes", 32<<20)
	c.WarmupSeconds = g.seconds("warmup_s", 0)
	c.RestSeconds = g.seconds("rest_s", 1)
	c.Repeats = g.count("repeats", 3, 1)
	e, _ := g.block("expect")
	c.MinTFLOPS = e.perKey("min_tflops", gemmDTypes)
	c.MaxSlowestVsMedian, _ = e.float("max_slowest_vs_median", 0)
	return c
}

func decodeHBM(m body) *HBMConfig {
	c := &HBMConfig{Warmup: m.count("warmup", 3, 0), Iters: m.count("iters", 20, 1)}
	c.Bytes, _ = m.bytes("bytes", 4<<30)
	if c.Bytes < 64<<20 || c.Bytes%64 != 0 {
		m.errorf("bytes", "Invalid size", "bytes must be a multiple of 64 of at least 64 MiB, so that the copy runs past launch overhead and the caches; %d is not.", c.Bytes)
		c.Bytes = 4 << 30
	}
	e, _ := m.block("expect")
	c.MinTBps, _ = e.float("min_tbps", 0)
	c.MinTriadTBps, _ = e.float("min_triad_tbps", 0)
	return c
}

func decodeP2P(p body) *P2PConfig {
	c := &P2PConfig{Warmup: p.count("warmup", 3, 0), Iters: p.count("iters", 10, 1)}
	c.Bytes, _ = p.bytes("bytes", 1<<30)
	if c.Bytes < 1<<20 || c.Bytes%4 != 0 {
		p.errorf("bytes", "Invalid size", "bytes must be a multiple of 4 of at least 1 MiB; %d is not.", c.Bytes)
		c.Bytes = 1 << 30
	}
	e, _ := p.block("expect")
	c.MinGBps, _ = e.float("min_gbps", 0)
	c.MinBidirGBps, _ = e.float("min_bidir_gbps", 0)
	return c
}

func decodeNCCL(n body) *NCCLConfig {
	c := &NCCLConfig{
		DType:   n.str("dtype", "bf16"),
		Factor:  n.count("factor", 4, 2),
		InPlace: n.boolean("in_place", true),
		Warmup:  n.count("warmup", 5, 0),
		Iters:   n.count("iters", 20, 1),
		Timeout: n.duration("timeout", time.Minute),
	}
	c.MinSeconds = n.seconds("min_batch_s", 0.05)
	for _, o := range n.strings("ops", []string{string(node.AllReduce)}, opNames()) {
		c.Ops = append(c.Ops, node.Op(o))
	}
	if node.ElemSize(c.DType) == 0 || c.DType == "tf32" || c.DType == "fp8" {
		n.errorf("dtype", "Unsupported dtype", "dtype must be bf16, fp16 or fp32, not %q.", c.DType)
		c.DType = "bf16"
	}
	c.MinBytes, _ = n.bytes("min_bytes", 1<<20)
	c.MaxBytes, _ = n.bytes("max_bytes", 1<<30)
	if c.MinBytes < 1 || c.MaxBytes < c.MinBytes {
		n.errorf("max_bytes", "Invalid size range", "The sweep needs 1 <= min_bytes <= max_bytes; got %d and %d.", c.MinBytes, c.MaxBytes)
		c.MinBytes, c.MaxBytes = 1<<20, 1<<30
	}
	e, _ := n.block("expect")
	c.MinBusBWGBps = e.perKey("min_busbw_gbps", opNames())
	c.MaxStragglerRatio, _ = e.float("max_straggler_ratio", cluster.DefaultMaxStragglerRatio)
	if c.MaxStragglerRatio < 1 {
		e.errorf("max_straggler_ratio", "Invalid straggler ratio", "max_straggler_ratio is a rank's time over the median of all ranks, so at least 1 (1.1 lets a rank be 10%% slower); got %g.", c.MaxStragglerRatio)
		c.MaxStragglerRatio = cluster.DefaultMaxStragglerRatio
	}
	return c
}

// Hardware is what the stage uses of the hardware profile's value.
type Hardware struct {
	Name             string
	Nodes            int
	GPUsPerNode      int
	GPUModel         string
	GPUMemoryBytes   int64
	TFLOPS           map[string]float64
	HBMBytesPerS     float64
	InterconnectKind string
	NetworkKind      string
}

// decodeHardware reads the attributes of hardware.NAME it needs and
// ignores the rest, so the profile object may grow.
func decodeHardware(b body) Hardware {
	h, ok := b.block("hardware")
	if !ok {
		return Hardware{}
	}
	if !h.v.Type().IsObjectType() && !h.v.Type().IsMapType() {
		b.errorf("hardware", "Invalid hardware", "hardware must be a hardware profile (hardware.NAME), not %s.", h.v.Type().FriendlyName())
		return Hardware{}
	}
	hw := Hardware{
		Name:             h.str("name", ""),
		Nodes:            h.count("nodes", 1, 1),
		GPUsPerNode:      h.count("gpus_per_node", 0, 0),
		GPUModel:         h.str("gpu_model", ""),
		InterconnectKind: h.str("interconnect_kind", ""),
		NetworkKind:      h.str("network_kind", ""),
		TFLOPS:           h.perKey("tflops", nil),
	}
	hw.GPUMemoryBytes, _ = h.bytes("gpu_memory_bytes", 0)
	hw.HBMBytesPerS, _ = h.float("hbm_bytes_per_s", 0)
	return hw
}

// modelWord is the GPU model's first word ("H200" of "H200 141GB SXM"),
// which NVML's name ("NVIDIA H200") contains.
func (h Hardware) modelWord() string {
	f := strings.Fields(h.GPUModel)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// defaultNVLinks is -1 (every link the GPU has must be up) on NVLink
// hardware and 0 (not checked) elsewhere.
func (h Hardware) defaultNVLinks() int {
	if strings.HasPrefix(h.InterconnectKind, "nvlink") {
		return -1
	}
	return 0
}

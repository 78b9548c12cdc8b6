package gpubench

import (
	"fmt"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/sdk"
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
	GPUs                int     `cty:"gpus"`  // 0: not checked
	Model               string  `cty:"model"` // "": not checked
	MinMemoryBytes      int64   `cty:"min_memory_bytes,bytes"`
	ECC                 bool    `cty:"ecc"`
	MaxUncorrectableECC int64   `cty:"max_uncorrectable_ecc"`
	Remaps              bool    `cty:"remaps"`
	MinNVLinks          int     `cty:"min_nvlinks"` // -1: every link the GPU has
	PCIeFullWidth       bool    `cty:"pcie_full_width"`
	PCIeFullGen         bool    `cty:"pcie_full_gen"`
	MaxTemperatureC     float64 `cty:"max_temperature_c"`
	NoThermalThrottle   bool    `cty:"no_thermal_throttle"`
	MinDriver           string  `cty:"min_driver_version"`
	MinCUDA             string  `cty:"min_cuda_version"`
	MinNCCL             string  `cty:"min_nccl_version"`
	MinPortRange        int     `cty:"min_port_range"`
	NCCLEnv             bool    `cty:"nccl_env"`
}

// GEMMConfig is the GEMM check.
type GEMMConfig struct {
	DTypes         []string `cty:"dtypes"`
	Sizes          []int    `cty:"sizes"`
	TopK           int      `cty:"top_k"`
	Warmup         int      `cty:"warmup"`
	Iters          int      `cty:"iters"`
	WarmupSeconds  float64  `cty:"warmup_s"`
	RestSeconds    float64  `cty:"rest_s"`
	Repeats        int      `cty:"repeats"`
	WorkspaceBytes int64    `cty:"workspace_bytes,bytes"`
	GEMMExpect     `cty:"expect"`
}

// GEMMExpect is the GEMM check's expect block.
type GEMMExpect struct {
	MinTFLOPS          DTypeThresholds `cty:"min_tflops"`
	MaxSlowestVsMedian float64         `cty:"max_slowest_vs_median"` // 0: not checked
}

// HBMConfig is the memory bandwidth check.
type HBMConfig struct {
	Bytes     int64 `cty:"bytes,bytes"`
	Warmup    int   `cty:"warmup"`
	Iters     int   `cty:"iters"`
	HBMExpect `cty:"expect"`
}

// HBMExpect is the memory bandwidth check's expect block.
type HBMExpect struct {
	MinTBps      float64 `cty:"min_tbps"`
	MinTriadTBps float64 `cty:"min_triad_tbps"`
}

// P2PConfig is the peer copy check.
type P2PConfig struct {
	Bytes     int64 `cty:"bytes,bytes"`
	Warmup    int   `cty:"warmup"`
	Iters     int   `cty:"iters"`
	P2PExpect `cty:"expect"`
}

// P2PExpect is the peer copy check's expect block.
type P2PExpect struct {
	MinGBps      float64 `cty:"min_gbps"`
	MinBidirGBps float64 `cty:"min_bidir_gbps"`
}

// NCCLConfig is the collectives check.
type NCCLConfig struct {
	Ops        []node.Op     `cty:"ops"`
	DType      string        `cty:"dtype"`
	MinBytes   int64         `cty:"min_bytes,bytes"`
	MaxBytes   int64         `cty:"max_bytes,bytes"`
	Factor     int           `cty:"factor"`
	InPlace    bool          `cty:"in_place"`
	Warmup     int           `cty:"warmup"`
	Iters      int           `cty:"iters"`
	MinSeconds float64       `cty:"min_batch_s"`
	Timeout    time.Duration `cty:"timeout,duration"`
	NCCLExpect `cty:"expect"`
}

// NCCLExpect is the collectives check's expect block.
type NCCLExpect struct {
	MinBusBWGBps OpThresholds `cty:"min_busbw_gbps"`
	// MaxStragglerRatio is how much slower than the median of all ranks a
	// rank may be, in a job of several nodes.
	MaxStragglerRatio float64 `cty:"max_straggler_ratio"`
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

// stageBody is the body as sdk.Decode reads it, each check's block
// holding its defaults until the body's values replace them.
type stageBody struct {
	LibDirs []string     `cty:"lib_dirs"`
	Health  *healthBlock `cty:"health"`
	GEMM    *GEMMConfig  `cty:"gemm"`
	HBM     *HBMConfig   `cty:"hbm"`
	P2P     *P2PConfig   `cty:"p2p"`
	NCCL    *NCCLConfig  `cty:"nccl"`
	Unknown sdk.Unknowns
}

// healthBlock: every health setting is a threshold.
type healthBlock struct {
	Expect HealthConfig `cty:"expect"`
}

// defaultBody holds what each check's settings are when left out; health's
// follow the hardware.
func defaultBody(hw Hardware) stageBody {
	return stageBody{
		Health: &healthBlock{Expect: HealthConfig{GPUs: hw.GPUsPerNode, Model: hw.modelWord(), MinMemoryBytes: hw.GPUMemoryBytes * 97 / 100,
			ECC: true, Remaps: true, MinNVLinks: hw.defaultNVLinks(), PCIeFullWidth: true, MaxTemperatureC: 85,
			NoThermalThrottle: true, MinPortRange: 16384, NCCLEnv: true}},
		GEMM: &GEMMConfig{DTypes: gemmDTypes, Sizes: []int{8192, 16384}, TopK: 8, Warmup: 5, Iters: 50,
			RestSeconds: 1, Repeats: 3, WorkspaceBytes: 32 << 20},
		HBM: &HBMConfig{Bytes: 4 << 30, Warmup: 3, Iters: 20},
		P2P: &P2PConfig{Bytes: 1 << 30, Warmup: 3, Iters: 10},
		NCCL: &NCCLConfig{Ops: []node.Op{node.AllReduce}, DType: "bf16", MinBytes: 1 << 20, MaxBytes: 1 << 30, Factor: 4,
			InPlace: true, Warmup: 5, Iters: 20, MinSeconds: 0.05, Timeout: time.Minute,
			NCCLExpect: NCCLExpect{MaxStragglerRatio: cluster.DefaultMaxStragglerRatio}},
	}
}

// DecodeConfig reads a stage body decoded with the stage schema: the
// hardware first, whose figures are health's defaults, then the checks.
func DecodeConfig(v cty.Value) (Config, api.Diagnostics) {
	hw, unknown, diags := decodeHardware(v)
	b := defaultBody(hw)
	diags = append(diags, sdk.Decode(v, &b)...)
	cfg := Config{Hardware: hw, LibDirs: b.LibDirs, GEMM: b.GEMM, HBM: b.HBM, P2P: b.P2P, NCCL: b.NCCL, Unknown: unknown || len(b.Unknown) > 0}
	if b.Health != nil {
		cfg.Health = &b.Health.Expect
	}
	diags = append(diags, checkConfig(cfg)...)
	if cfg.Health == nil && cfg.GEMM == nil && cfg.HBM == nil && cfg.P2P == nil && cfg.NCCL == nil && !cfg.Unknown {
		diags = append(diags, api.Diagnostic{
			Severity: api.Warning, Summary: "No check",
			Detail: "The stage names none of health, gemm, hbm, p2p and nccl, so it checks nothing; add at least one block.",
		})
	}
	return cfg, diags
}

// Hardware is what the stage uses of the hardware profile's value.
type Hardware struct {
	Name             string        `cty:"name"`
	Nodes            int           `cty:"nodes"`
	GPUsPerNode      int           `cty:"gpus_per_node"`
	GPUModel         string        `cty:"gpu_model"`
	GPUMemoryBytes   int64         `cty:"gpu_memory_bytes,bytes"`
	TFLOPS           AnyThresholds `cty:"tflops"`
	HBMBytesPerS     float64       `cty:"hbm_bytes_per_s"`
	InterconnectKind string        `cty:"interconnect_kind"`
	NetworkKind      string        `cty:"network_kind"`
}

// hardwareArg is the hardware meta-argument as the body holds it: first
// as it is, to refuse what is no profile, then as the profile.
type hardwareArg struct {
	Value cty.Value `cty:"hardware"`
}

// hardwareProfile is the profile over its defaults, nil where the body
// names none or it is not known yet.
type hardwareProfile struct {
	Profile *Hardware `cty:"hardware"`
	Unknown sdk.Unknowns
}

// decodeHardware reads the attributes of hardware.NAME it needs and
// ignores the rest, so the profile object may grow; unknown says that
// some of them are known only at apply time.
func decodeHardware(v cty.Value) (hw Hardware, unknown bool, diags api.Diagnostics) {
	var arg hardwareArg
	diags = sdk.Decode(v, &arg)
	if h := arg.Value; h != cty.NilVal && !h.Type().IsObjectType() && !h.Type().IsMapType() {
		return Hardware{}, false, append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid hardware", Path: cty.GetAttrPath("hardware"),
			Detail: fmt.Sprintf("hardware must be a hardware profile (hardware.NAME), not %s.", h.Type().FriendlyName())})
	}
	p := hardwareProfile{Profile: &Hardware{Nodes: 1}}
	diags = append(diags, sdk.Decode(v, &p)...)
	if p.Profile == nil {
		return Hardware{}, len(p.Unknown) > 0, diags
	}
	return *p.Profile, len(p.Unknown) > 0, append(diags, checkHardware(p.Profile)...)
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

package gpubench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

func TestDecodeDefaults(t *testing.T) {
	t.Parallel()
	cfg, diags := DecodeConfig(decodeHCL(t, `
hardware = hardware.lab
health {}
gemm {}
hbm {}
p2p {}
nccl {}
`))
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %+v", diags)
	}
	want := Config{
		Hardware: Hardware{Name: "h200-x4", Nodes: 1, GPUsPerNode: 4, GPUModel: "H200 141GB SXM",
			GPUMemoryBytes: 143771 << 20, HBMBytesPerS: 4.8e12, InterconnectKind: "nvlink4", NetworkKind: "none",
			TFLOPS: AnyThresholds{"bf16": 989, "fp16": 989, "fp8": 1979, "tf32": 494}},
		Health: &HealthConfig{GPUs: 4, Model: "H200", MinMemoryBytes: (143771 << 20) * 97 / 100, ECC: true,
			Remaps: true, MinNVLinks: -1, PCIeFullWidth: true, MaxTemperatureC: 85, NoThermalThrottle: true,
			MinPortRange: 16384, NCCLEnv: true},
		GEMM: &GEMMConfig{DTypes: []string{"bf16", "fp16", "tf32", "fp8"}, Sizes: []int{8192, 16384}, TopK: 8,
			Warmup: 5, RestSeconds: 1, Repeats: 3, Iters: 50, WorkspaceBytes: 32 << 20},
		HBM: &HBMConfig{Bytes: 4 << 30, Warmup: 3, Iters: 20},
		P2P: &P2PConfig{Bytes: 1 << 30, Warmup: 3, Iters: 10},
		NCCL: &NCCLConfig{Ops: []node.Op{node.AllReduce}, DType: "bf16", MinBytes: 1 << 20, MaxBytes: 1 << 30, Factor: 4,
			InPlace: true, Warmup: 5, Iters: 20, MinSeconds: 0.05, Timeout: time.Minute, NCCLExpect: NCCLExpect{MaxStragglerRatio: 1.1}},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestDecodeThresholds(t *testing.T) {
	t.Parallel()
	cfg, diags := DecodeConfig(decodeHCL(t, `
gemm {
  dtypes = ["bf16", "fp8"]
  sizes  = [4096]
  expect {
    min_tflops            = { bf16 = 0.7 * hardware.lab.tflops.bf16, fp8 = null }
    max_slowest_vs_median = 0.05
  }
}
hbm {
  bytes = "32GiB"
  expect { min_tbps = 3.8 }
}
p2p {
  bytes = 268435456
  expect { min_gbps = null }
}
nccl {
  ops       = ["all_reduce", "alltoall"]
  dtype     = "fp32"
  min_bytes = "8MiB"
  max_bytes = "512MiB"
  factor    = 8
  timeout   = "90s"
  expect { min_busbw_gbps = 320 }
}
`))
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %+v", diags)
	}
	if diff := cmp.Diff(DTypeThresholds{"bf16": 0.7 * 989}, cfg.GEMM.MinTFLOPS); diff != "" {
		t.Errorf("min_tflops (-want +got):\n%s", diff)
	}
	if cfg.GEMM.MaxSlowestVsMedian != 0.05 || cfg.HBM.Bytes != 32<<30 || cfg.HBM.MinTBps != 3.8 {
		t.Errorf("gemm/hbm = %+v %+v", cfg.GEMM, cfg.HBM)
	}
	if cfg.P2P.Bytes != 256<<20 || cfg.P2P.MinGBps != 0 {
		t.Errorf("p2p = %+v", cfg.P2P)
	}
	wantBus := OpThresholds{}
	for _, op := range node.Ops {
		wantBus[string(op)] = 320
	}
	if diff := cmp.Diff(wantBus, cfg.NCCL.MinBusBWGBps); diff != "" {
		t.Errorf("min_busbw_gbps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{8 << 20, 64 << 20, 512 << 20}, cfg.NCCL.Sizes()); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}
	if cfg.NCCL.Timeout != 90*time.Second || cfg.NCCL.DType != "fp32" {
		t.Errorf("nccl = %+v", cfg.NCCL)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		src      string
		wantPath cty.Path
		summary  string
	}{
		"unknown dtype": {
			src:      `gemm { dtypes = ["bf16", "int4"] }`,
			wantPath: cty.GetAttrPath("gemm").GetAttr("dtypes"), summary: "Unsupported value",
		},
		"size without a unit we know": {
			src:      `hbm { bytes = "4 gigs" }`,
			wantPath: cty.GetAttrPath("hbm").GetAttr("bytes"), summary: "Invalid size",
		},
		"hbm too small": {
			src:      `hbm { bytes = "1MiB" }`,
			wantPath: cty.GetAttrPath("hbm").GetAttr("bytes"), summary: "Invalid size",
		},
		"unknown collective": {
			src:      `nccl { ops = ["allreduce"] }`,
			wantPath: cty.GetAttrPath("nccl").GetAttr("ops"), summary: "Unsupported value",
		},
		"fp8 collective": {
			src:      `nccl { dtype = "fp8" }`,
			wantPath: cty.GetAttrPath("nccl").GetAttr("dtype"), summary: "Unsupported dtype",
		},
		"reversed sweep": {
			src:      "nccl {\n min_bytes = \"1GiB\"\n max_bytes = \"1MiB\"\n}",
			wantPath: cty.GetAttrPath("nccl").GetAttr("max_bytes"), summary: "Invalid size range",
		},
		"bad timeout": {
			src:      `nccl { timeout = "soon" }`,
			wantPath: cty.GetAttrPath("nccl").GetAttr("timeout"), summary: "Invalid duration",
		},
		"threshold for a dtype that does not exist": {
			src:      "gemm {\n expect {\n min_tflops = { bf17 = 1 }\n }\n}",
			wantPath: cty.GetAttrPath("gemm").GetAttr("expect").GetAttr("min_tflops"), summary: "Unsupported key",
		},
		"fractional iterations": {
			src:      `gemm { iters = 2.5 }`,
			wantPath: cty.GetAttrPath("gemm").GetAttr("iters"), summary: "Not a whole number",
		},
		"hardware that is not a profile": {
			src:      `hardware = "h200"`,
			wantPath: cty.GetAttrPath("hardware"), summary: "Invalid hardware",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, diags := DecodeConfig(decodeHCL(t, tc.src))
			var errs api.Diagnostics
			for _, d := range diags {
				if d.Severity == api.Error {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("want one error, got %+v", diags)
			}
			if !errs[0].Path.Equals(tc.wantPath) || errs[0].Summary != tc.summary {
				t.Errorf("got %q at %#v, want %q at %#v", errs[0].Summary, errs[0].Path, tc.summary, tc.wantPath)
			}
		})
	}
}

func TestDecodeNoCheckWarns(t *testing.T) {
	t.Parallel()
	_, diags := DecodeConfig(decodeHCL(t, `hardware = hardware.lab`))
	if len(diags) != 1 || diags[0].Severity != api.Warning || diags[0].Summary != "No check" {
		t.Errorf("diagnostics = %+v, want one No check warning", diags)
	}
}

func TestDecodeUnknownTakesDefault(t *testing.T) {
	t.Parallel()
	cfg, diags := DecodeConfig(decodeHCL(t, `gemm { iters = later }`))
	if len(diags) != 0 || !cfg.Unknown || cfg.GEMM.Iters != 50 {
		t.Errorf("unknown iters: cfg %+v unknown=%v diags %+v", cfg.GEMM, cfg.Unknown, diags)
	}
}

// TestDecodeErrorPutsDefaultBack: a list refused is replaced by its
// default, as the checker promises, so nothing after the error works on
// the bad value.
func TestDecodeErrorPutsDefaultBack(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		src  string
		got  func(Config) any
		want any
	}{
		"unknown dtype": {
			src:  `gemm { dtypes = ["bf16", "int4"] }`,
			got:  func(c Config) any { return c.GEMM.DTypes },
			want: gemmDTypes,
		},
		"unknown collective": {
			src:  `nccl { ops = ["all_reduce", "allreduce"] }`,
			got:  func(c Config) any { return c.NCCL.Ops },
			want: []node.Op{node.AllReduce},
		},
		"no collective": {
			src:  `nccl { ops = [] }`,
			got:  func(c Config) any { return c.NCCL.Ops },
			want: []node.Op{node.AllReduce},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := DecodeConfig(decodeHCL(t, tc.src))
			if len(diags) != 1 || diags[0].Severity != api.Error {
				t.Fatalf("diagnostics = %+v, want one error", diags)
			}
			if diff := cmp.Diff(tc.want, tc.got(cfg)); diff != "" {
				t.Errorf("value after the error (-want +got):\n%s", diff)
			}
		})
	}
}

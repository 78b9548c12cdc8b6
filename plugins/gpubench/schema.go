package gpubench

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Name and Version identify the plugin; StageType is the stage type it
// serves. The version is part of every benchmark stage's input hash.
const (
	Name      = "gpubench"
	Version   = "0.1.0"
	StageType = "benchmark"
)

func attr(t cty.Type, description string) *api.Attribute {
	return &api.Attribute{Type: t, Description: description}
}

// sizeType takes a number of bytes or a string with a unit ("4GiB").
var sizeType = cty.DynamicPseudoType

func expectBlock(attrs map[string]*api.Attribute) map[string]*api.NestedBlock {
	return map[string]*api.NestedBlock{
		"expect": {Nesting: api.NestingSingle, Block: api.BlockSchema{
			Description: "Thresholds; the check fails when a figure misses one. An unset or null threshold is not checked.",
			Attributes:  attrs,
		}},
	}
}

func single(description string, attrs map[string]*api.Attribute, expect map[string]*api.Attribute) *api.NestedBlock {
	return &api.NestedBlock{Nesting: api.NestingSingle, Block: api.BlockSchema{
		Description: description, Attributes: attrs, Blocks: expectBlock(expect),
	}}
}

// contract: a benchmark stage may name its hardware (hardware.NAME), whose
// GPU count, model, memory and interconnect are health's defaults, and
// whose node and GPU counts are the stage's claim. It is not estimated.
var contract = &api.StageContract{MetaArguments: []api.MetaArgument{{Name: api.MetaHardware}}}

// stageSchema is the body of a benchmark stage.
var stageSchema = &api.BlockSchema{
	Description: "Acceptance checks of the GPUs of one node, each optional, each with thresholds.",
	Attributes: map[string]*api.Attribute{
		"lib_dirs": attr(cty.List(cty.String), "Folders searched first for libcuda, NVML, cuBLASLt and NCCL."),
	},
	Blocks: map[string]*api.NestedBlock{
		"health": single("NVML state of every GPU and host preflight checks.", nil, map[string]*api.Attribute{
			"gpus":                  attr(cty.Number, "GPUs the node must show; default the hardware's gpus_per_node."),
			"model":                 attr(cty.String, "Text every GPU name must contain; default the first word of the hardware's gpu_model."),
			"min_memory_bytes":      attr(sizeType, "Least memory per GPU; default 97% of the hardware's gpu_memory_bytes."),
			"ecc":                   attr(cty.Bool, "ECC must be on with no change pending (default true)."),
			"max_uncorrectable_ecc": attr(cty.Number, "Most uncorrectable ECC errors since the driver loaded (default 0)."),
			"remaps":                attr(cty.Bool, "No row remap pending or failed (default true)."),
			"min_nvlinks":           attr(cty.Number, "Least active NVLinks per GPU; default every link when the interconnect is NVLink."),
			"pcie_full_width":       attr(cty.Bool, "PCIe link at its maximum width (default true)."),
			"pcie_full_gen":         attr(cty.Bool, "PCIe link at its maximum generation (default false: idle GPUs train down)."),
			"max_temperature_c":     attr(cty.Number, "Hottest a GPU may be (default 85)."),
			"no_thermal_throttle":   attr(cty.Bool, "No thermal or power-brake clock slowdown (default true)."),
			"min_driver_version":    attr(cty.String, "Least driver version, as \"550.54\"."),
			"min_cuda_version":      attr(cty.String, "Least CUDA driver API version, as \"12.4\"."),
			"min_nccl_version":      attr(cty.String, "Least NCCL version, as \"2.21\"."),
			"min_port_range":        attr(cty.Number, "Least ephemeral ports (default 16384)."),
			"nccl_env":              attr(cty.Bool, "Fail on NCCL_* settings known to cripple NCCL (default true)."),
		}),
		"gemm": single("Matrix products through cuBLASLt on every GPU at once, best of cuBLASLt's heuristic candidates.", map[string]*api.Attribute{
			"dtypes":          attr(cty.List(cty.String), "Any of bf16, fp16, tf32, fp8 (e4m3, TN); default all four."),
			"sizes":           attr(cty.List(cty.Number), "Square sizes M=N=K; default [8192, 16384]."),
			"top_k":           attr(cty.Number, "Heuristic candidates timed (default 8)."),
			"warmup":          attr(cty.Number, "Untimed products first, at least (default 5)."),
			"warmup_s":        attr(cty.Number, "Seconds of untimed products first, at least (default 0); a few seconds measure the sustained rate under the power cap."),
			"rest_s":          attr(cty.Number, "Seconds the GPU idles before each timed run, so that every run starts alike (default 1)."),
			"repeats":         attr(cty.Number, "Timed runs of the finalists, the fastest kept (default 3)."),
			"iters":           attr(cty.Number, "Timed products (default 50)."),
			"workspace_bytes": attr(sizeType, "cuBLASLt workspace (default 32MiB)."),
		}, map[string]*api.Attribute{
			"min_tflops":            attr(cty.DynamicPseudoType, "Least TFLOP/s per GPU at every size: a number, or a map by dtype."),
			"max_slowest_vs_median": attr(cty.Number, "Most the slowest GPU may lag the node median, as a fraction (0.05 = 5%)."),
		}),
		"hbm": single("Device-to-device copy and a triad kernel on every GPU at once.", map[string]*api.Attribute{
			"bytes":  attr(sizeType, "Copy size; the copy holds twice this, the triad's three arrays the same memory (default 4GiB)."),
			"warmup": attr(cty.Number, "Untimed runs first (default 3)."),
			"iters":  attr(cty.Number, "Timed runs (default 20)."),
		}, map[string]*api.Attribute{
			"min_tbps":       attr(cty.Number, "Least copy bandwidth per GPU, TB/s, bytes read plus written."),
			"min_triad_tbps": attr(cty.Number, "Least triad bandwidth per GPU, TB/s, bytes read plus written."),
		}),
		"p2p": single("Copy-engine copies between every pair of GPUs, one way and both ways; skipped with one GPU.", map[string]*api.Attribute{
			"bytes":  attr(sizeType, "Copy size (default 1GiB)."),
			"warmup": attr(cty.Number, "Untimed copies first (default 3)."),
			"iters":  attr(cty.Number, "Timed copies (default 10)."),
		}, map[string]*api.Attribute{
			"min_gbps":       attr(cty.Number, "Least one-way bandwidth of every ordered pair, GB/s."),
			"min_bidir_gbps": attr(cty.Number, "Least both-ways bandwidth (sum of the two directions) of every pair, GB/s."),
		}),
		"nccl": single("NCCL collectives over all GPUs of the node, one thread per GPU, checked exactly.", map[string]*api.Attribute{
			"ops":         attr(cty.List(cty.String), "Any of all_reduce, all_gather, reduce_scatter, alltoall, broadcast (default [all_reduce])."),
			"dtype":       attr(cty.String, "bf16, fp16 or fp32 (default bf16)."),
			"min_bytes":   attr(sizeType, "Smallest size, as nccl-tests counts it (default 1MiB)."),
			"max_bytes":   attr(sizeType, "Largest size (default 1GiB)."),
			"factor":      attr(cty.Number, "Size multiplier between steps (default 4)."),
			"in_place":    attr(cty.Bool, "Also run in place (default true)."),
			"warmup":      attr(cty.Number, "Untimed runs first (default 5)."),
			"iters":       attr(cty.Number, "Timed runs, at least (default 20)."),
			"min_batch_s": attr(cty.Number, "More timed runs where needed for the batch to last this long, as the warm-up predicts; small sizes are otherwise noise (default 0.05)."),
			"timeout":     attr(cty.DynamicPseudoType, "How long one batch of runs may take before the communicators are aborted: \"60s\" or seconds (default 60s)."),
		}, map[string]*api.Attribute{
			"min_busbw_gbps":      attr(cty.DynamicPseudoType, "Least bus bandwidth at the largest size, out of place, GB/s: a number, or a map by op."),
			"max_straggler_ratio": attr(cty.Number, "Across nodes: most a rank's time may exceed the median of all ranks' for the same collective and size, as a ratio (default 1.1)."),
		}),
	},
}

package estimate

// gpuflow's own trainer (plugins/train/trainer): fp32 weights sharded by
// FSDP2, bf16 gathers and compute, fp32 gradient reduction, fused AdamW,
// SDPA, blocks compiled one by one (or not, gpuflow-eager). The fitted
// figures come from its runs on nvidia-h200-x4 (docs/benchmarks.md,
// "Training"): A is the Llama-3.2-1B shape on one H200 compiled, B the
// same eager, C the same on four H200, D the h200-lab pre-train and E its
// LoRA fine-tune (114M parameters, two H200). docs/estimator.md shows
// each fit.
const (
	// trainerGEMMShare, trainerEagerGEMMShare: A's and B's step time
	// less their optimizer step, over the matrix and attention time at the
	// default GEMM efficiency (fitted, one run each).
	trainerGEMMShare      = 0.751
	trainerEagerGEMMShare = 0.618
	// trainerActivation: compiled blocks keep about the Korthikanti count
	// (fitted to A's, C's and D's peak allocated memory);
	// trainerEagerActivation: eager blocks keep more, the measured plain
	// block's 44.6 sbh plus K and V expanded to every query head (fitted
	// to B's).
	trainerActivation      = 1.024
	trainerEagerActivation = 1.223
	// trainerLogitBytes: the compiled loss keeps the bf16 logits and
	// writes their bf16 gradient; trainerEagerLogitBytes: eager
	// cross-entropy peaks in its backward with three fp32 tensors of the
	// logits' size (log-softmax output, its gradient, the input
	// gradient). Derived, not fitted.
	trainerLogitBytes      = 4
	trainerEagerLogitBytes = 12
	// trainerReserveBytes and trainerAllocatorSlack: peak reserved memory
	// plus what the process holds outside PyTorch, less peak allocated,
	// is this constant plus this share of the activations (fitted to all
	// five runs; the trainer initialises NCCL on one GPU too).
	trainerReserveBytes   = 4.11e9
	trainerAllocatorSlack = 0.096
	// trainerHostSPerLayer: D is bound by the host, not the GPU (fitted);
	// trainerHostSPerAdapter: E's extra host time per adapter (fitted).
	trainerHostSPerLayer   = 3.62e-3
	trainerHostSPerAdapter = 0.376e-3
	// trainerStepBytes: fused AdamW on fp32 reads weights, gradients and
	// two moments and writes all but the gradients (28 bytes); gradient
	// clipping reads the gradients for their norm and scales them in
	// place (12). Derived, not fitted.
	trainerStepBytes = 40
)

// trainer is the accounting of gpuflow's trainer, compiled or eager.
func trainer(name string, compiled bool) Framework {
	f := Framework{Name: name, WeightBytes: 4, GradBytes: 4, OptimizerBytes: 8,
		GradCommBytes: 4, ParamCommBytes: 2,
		ActivationCoefficient: trainerActivation, LogitBytes: trainerLogitBytes, GEMMShare: trainerGEMMShare,
		StepBytesPerParam: trainerStepBytes, ReserveBytes: trainerReserveBytes, ReserveBytesDistributed: trainerReserveBytes,
		OverlapDP: true, FSDP2: true, GradientsFreed: true, FrozenInputsFreed: true, AllocatorSlack: trainerAllocatorSlack,
		HostSPerLayer: trainerHostSPerLayer, HostSPerAdapter: trainerHostSPerAdapter}
	if !compiled {
		f.ActivationCoefficient, f.LogitBytes, f.GEMMShare = trainerEagerActivation, trainerEagerLogitBytes, trainerEagerGEMMShare
	}
	return f
}

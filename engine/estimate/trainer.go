package estimate

// gpuflow's own trainer (plugins/train/trainer): fp32 weights sharded by
// FSDP2, bf16 gathers and compute, fp32 gradient reduction, fused AdamW,
// SDPA, blocks compiled one by one (or not, gpuflow-eager), expandable
// allocator segments. The fitted figures come from its runs on
// nvidia-h200-x4 (docs/benchmarks.md, "Plan against measurement"; the
// runs are listed in trainer_test.go and docs/estimator.md): A-I first,
// then A-M again with expandable segments; N-S checked the refit out of
// sample. docs/estimator.md shows each fit.
const (
	// trainerGEMMShare, trainerEagerGEMMShare: the GPU-bound runs' step
	// time less their optimizer step, over the matrix and attention time
	// at the default GEMM efficiency (least squares over A, C, F, G and
	// over B, I).
	trainerGEMMShare      = 0.724
	trainerEagerGEMMShare = 0.601
	// trainerActivation: compiled blocks keep about the Korthikanti count
	// (least squares over the compiled runs' peak allocated memory);
	// trainerEagerActivation: eager blocks keep more, the measured plain
	// block's 44.6 sbh plus K and V expanded to every query head (B, I).
	trainerActivation      = 1.029
	trainerEagerActivation = 1.229
	// trainerLogitBytes: the compiled loss keeps the bf16 logits and
	// writes their bf16 gradient; trainerEagerLogitBytes: eager
	// cross-entropy peaks in its backward with three fp32 tensors of the
	// logits' size (log-softmax output, its gradient, the input
	// gradient). Derived, not fitted.
	trainerLogitBytes      = 4
	trainerEagerLogitBytes = 12
	// Peak reserved memory plus what the process holds outside PyTorch,
	// less peak allocated, is a constant (CUDA context, cuBLAS, NCCL and
	// compiled kernels; more with peers to talk to), plus the gradients'
	// memory, which stays reserved for FSDP2's reduction stream
	// (Framework.GradientPool), plus, eager, a share of the activations.
	// Least squares over A-M, the thirteen runs with expandable segments
	// (the trainer's default); TestTrainerFit refits them.
	trainerReserveBytes        = 1.85e9
	trainerReserveBytesPeer    = 3.80e9
	trainerEagerAllocatorSlack = 0.072
	// trainerHostSPerLayer: D, E and H are bound by the host, not the GPU
	// (the mean over the three, TestTrainerFit; E's LoRA layers took no more host
	// time than D's full ones).
	trainerHostSPerLayer = 3.85e-3
	// trainerHostSPerTPCollectiveSpread, trainerCouplingExponent: what
	// tensor and pipeline parallelism measured beyond the GPU's work.
	// Profiled (U, TP4), each rank's GPU waited at every tensor-parallel
	// collective for the last rank's host: a 64 MiB all-gather's kernel
	// took 0.8-1.4 ms, 0.3 ms of it moving data. Least squares on the log
	// of tokens/s over every compiled run with tp or pp above 1
	// (TestTrainerCouplingFit; rms 11.6% over 28 runs, the host's own
	// speed moving between calls by more); trainerEagerHostSPerTPCollectiveSpread
	// fits UE, the one eager run with tensor parallelism, on the same
	// exponent.
	trainerHostSPerTPCollectiveSpread      = 0.575e-3
	trainerEagerHostSPerTPCollectiveSpread = 1.51e-3
	trainerCouplingExponent                = 2.9
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
		StepBytesPerParam: trainerStepBytes, ReserveBytes: trainerReserveBytes, ReserveBytesDistributed: trainerReserveBytesPeer,
		OverlapDP: true, FSDP2: true, GradientsFreed: true, FrozenInputsFreed: true, SelectiveKeepsProducts: true, DTensorTP: true, GradientPool: true,
		HostSPerLayer: trainerHostSPerLayer, HostSPerTPCollectiveSpread: trainerHostSPerTPCollectiveSpread, CouplingExponent: trainerCouplingExponent}
	if !compiled {
		f.ActivationCoefficient, f.LogitBytes, f.GEMMShare = trainerEagerActivation, trainerEagerLogitBytes, trainerEagerGEMMShare
		f.AllocatorSlack = trainerEagerAllocatorSlack
		f.HostSPerTPCollectiveSpread = trainerEagerHostSPerTPCollectiveSpread
	}
	return f
}

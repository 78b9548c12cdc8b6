package estimate

import (
	"fmt"
	"sort"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// Framework is how a training framework spends memory and time, as far as
// the estimator needs to know it. Bytes are per parameter before sharding.
type Framework struct {
	Name string
	// WeightBytes, GradBytes and OptimizerBytes are the model states kept
	// per trained parameter: e.g. bf16 weights (2), fp32 main gradients
	// (4), fp32 master weights and two Adam moments (12).
	WeightBytes, GradBytes, OptimizerBytes float64
	// GradCommBytes and ParamCommBytes are the element sizes of gradient
	// reductions and parameter all-gathers.
	GradCommBytes, ParamCommBytes float64
	// ActivationCoefficient scales the Korthikanti activation count.
	ActivationCoefficient float64
	// LogitBytes is held per logit element (tokens x vocab) at the loss.
	LogitBytes float64
	// GEMMShare is the share of a training step's compute time spent in
	// matrix products at bf16; the rest (norms, element-wise kernels,
	// launches) does not speed up with fp8, and shrinks with LoRA only
	// where FrozenGradsFree says so. With ElementwiseCounted,
	// CompiledElementwise or EagerElementwise the
	// element-wise kernels are counted apart and the rest is what
	// remains (launch gaps, synchronisation).
	GEMMShare float64
	// ElementwiseCounted: the element-wise kernels around the products
	// are counted kernel by kernel in bytes (elementwiseTime), as
	// Megatron-LM's fused GPT layer runs them, instead of being left in
	// GEMMShare.
	ElementwiseCounted bool
	// CompiledElementwise: the same for gpuflow's compiled trainer, whose
	// element-wise kernels torch.compile fuses (trainerElementwiseTime).
	CompiledElementwise bool
	// EagerElementwise: the same for eager PyTorch blocks, whose
	// operators run unfused (eagerElementwiseTime).
	EagerElementwise bool
	// Eager PyTorch's memory traffic per weight and micro-batch outside
	// the products. CastBytesPerParam, for every weight the GPU
	// multiplies: autocast's bf16 copy of each fp32 weight in the forward
	// (6), or under FSDP2 the all-gather's copies out into the parameters
	// for the forward and the backward (4 each). GradCastBytesPerParam,
	// for every trained weight: its gradient cast to fp32 (6).
	// AccumulateBytesPerParam, for every trained weight and each
	// micro-batch after a step's first: the fp32 gradient accumulated in
	// place (12; FSDP2 reduces every micro-batch into its shard instead).
	// RecomputeBytesPerParam, for the layers' weights under full
	// recomputation: the recomputed forward's casts (6; FSDP2's backward
	// gather serves the recomputation).
	CastBytesPerParam, GradCastBytesPerParam, AccumulateBytesPerParam, RecomputeBytesPerParam float64
	// LookupsUncast: an input embedding only looked up keeps its fp32
	// table and gradient, which autocast neither copies nor casts (plain
	// PyTorch); FSDP2 gathers and reduces it as any other weight.
	LookupsUncast bool
	// GradCastFollowsReduce: the gradient's cast is for the reduction
	// (FSDP2's reduce-scatter in fp32), so a 16-bit reduction
	// (grad_reduce_dtype) has none.
	GradCastFollowsReduce bool
	// FP8HeadBF16: under precision "fp8" the output layer's products stay
	// in bf16 (gpuflow's trainer converts the blocks' linear layers only).
	FP8HeadBF16 bool
	// FP8DynamicScaling: each fp8 product scales its input, weight and
	// output gradient by their current maximum, in passes over memory
	// outside the product (fp8Traffic), where Transformer Engine fuses
	// the casts into the kernels before.
	FP8DynamicScaling bool
	// FP8FrozenBase: under LoRA with precision "fp8" every block product
	// of the frozen base runs in fp8, its forward and its input's gradient
	// (a frozen weight has no weight-gradient product), while the
	// adapters' products stay at bf16; the scaling transposes no operand
	// for a weight gradient, casts each weight again for the backward
	// under its forward scale instead of keeping an fp8 copy, and under
	// TP the layers' inputs are gathered in bf16 (gpuflow's trainer,
	// lora.py).
	FP8FrozenBase bool
	// StepBytesPerParam is the memory traffic per optimizer parameter of
	// the once-per-step, memory-bound work: the optimizer update and, for
	// eager PyTorch, gradient zeroing and weight casts.
	StepBytesPerParam float64
	// StepBytesAlone replaces StepBytesPerParam on one GPU alone
	// (AloneWithoutFSDP2), where the step also writes the compute copy's
	// weights; zero keeps StepBytesPerParam.
	StepBytesAlone float64
	// ReserveBytes is device memory outside the framework's tensors: CUDA
	// context and cuBLAS workspace, plus NCCL when there is more than one
	// GPU (ReserveBytesDistributed).
	ReserveBytes, ReserveBytesDistributed float64
	// OverlapDP: gradient reduction overlaps the backward pass (and the
	// parameter all-gather the next forward). The layout's
	// overlap_grad_reduce replaces it.
	OverlapDP bool
	// Attention is the attention implementation, layout.AttentionFlash
	// ("" means flash) or layout.AttentionMaterialized; the layout's
	// attention replaces it.
	Attention string
	// CuDNNAttention: fused attention runs cuDNN's kernels through
	// PyTorch's scaled_dot_product_attention (gpuflow's trainer, whose
	// profiles show them), timed by their measured rate (attentionRate).
	// Elsewhere the attention core is charged at the products' rate and
	// what its kernel loses against them stays in the fitted GEMMShare.
	CuDNNAttention bool
	// LookupsRead: an untied input embedding and learned positions are
	// read by index, and on a single stage without tensor parallelism
	// what the count charges them (6 FLOPs per parameter and token, 4 for
	// frozen weights under LoRA) leaves the executed work
	// (job.lookups): gpuflow's trainer ran the 1B shape untied 1.3%
	// slower than tied on one GPU where the count charged 17.5% more work
	// (U4). Elsewhere the count keeps them. Under tensor parallelism the
	// untied embedding measured about what they charge (J against JT),
	// for a reason not isolated; under pipelining the plan's average stage
	// spreads the output layer over the stages, where the last one runs it
	// on top of its layers, and the lookups' charge stands in for that
	// imbalance (docs/estimator.md, Known limits).
	LookupsRead bool
	// ScatterGather: a pipeline send leaves each TP rank as a 1/tp slice
	// and is gathered again over NVLink on arrival, with or without
	// sequence parallelism (Megatron-LM); the layout's scatter_gather
	// replaces it.
	ScatterGather bool
	// GradSendsWhole: with ScatterGather the forward's sends are split
	// but every TP rank sends the backward's activation gradient whole
	// (DeepSpeed's pipeline engine before v0.5.4, October 2021, whose
	// is_grad_partitioned was off). The layout's scatter_gather_grads
	// replaces it.
	GradSendsWhole bool
	// RegathersOutput: with ScatterGather a stage keeps only its 1/tp
	// slice of each activation it sent and gathers it whole again over
	// the TP group before that micro-batch's backward (DeepSpeed's
	// pipeline engine, whose autograd call needs the output whole).
	RegathersOutput bool
	// GEMMsPerLayer is the matrix products one layer's forward launches
	// (Megatron-LM fuses q, k and v, and gate and up: 4). Each pays the
	// fixed per-product overhead; zero leaves the overhead in GEMMShare,
	// for frameworks whose share was fitted to measured runs.
	GEMMsPerLayer float64
	// SeparateGradAccumulation: each micro-batch's weight gradients are
	// written as their own tensor and added into the accumulated (main)
	// gradients by a separate, memory-bound pass: Megatron-LM before
	// gradient accumulation fusion (February 2022; the backward hook's
	// main_grad.add_), and autograd's accumulation in DeepSpeed. With
	// fusion the weight-gradient product adds into the main gradient in
	// its epilogue. The layout's grad_accumulation_fusion replaces it.
	// The fitted frameworks (pytorch-eager, fsdp2, gpuflow) leave it off:
	// their measured constants hold whatever accumulation costs.
	SeparateGradAccumulation bool
	// AsyncTPAllReduce: the tensor-parallel all-reduce of a
	// column-parallel layer's input gradient (reduce-scatter under
	// sequence parallelism) is launched before the layer's weight-gradient
	// product and runs beside it, so that product's time hides it
	// (Megatron-LM since September 2021, ColumnParallelLinear's and Transformer
	// Engine's Linear alike; Megatron-DeepSpeed turns it off under
	// DeepSpeed). The layout's async_tp_allreduce replaces it.
	AsyncTPAllReduce bool
	// HalfReduceUnderFP16: with precision "fp16" the gradients are
	// reduced in fp16 unless the layout says otherwise (Megatron-LM keeps
	// fp32 reduction only for bf16).
	HalfReduceUnderFP16 bool
	// GradBytesFollowReduce: the gradient buffer has the reduction's
	// element type (Megatron-LM's main_grad buffer is fp32 only when the
	// reduction is).
	GradBytesFollowReduce bool
	// FSDP2 is data parallelism on PyTorch's fully_shard as gpuflow's
	// trainer runs it: ZeRO stages 1-3 shard weights, gradients and
	// optimizer states alike; bf16 copies of the weights are gathered
	// (on one GPU too) and kept from the forward to the backward, except
	// at stage 3, which holds the root module (embeddings, final norm,
	// output) and two layers; gradients are reduced every micro-batch.
	FSDP2 bool
	// AloneWithoutFSDP2: on one GPU alone (no tensor, pipeline, data or
	// context parallelism) FSDP2 is skipped: the forward and backward run
	// on a bf16 copy of every weight, kept between steps, and the fp32
	// gradients are made on the compute stream, so the next step's
	// activations reuse their memory (no GradientPool).
	AloneWithoutFSDP2 bool
	// GradientsFreed: the gradients are freed after every optimizer step,
	// so a step of one micro-batch without pipelining peaks before any
	// exist.
	GradientsFreed bool
	// FrozenInputsFreed: autograd keeps no input of a frozen linear layer,
	// so under LoRA the inputs only layers without adapters read are not
	// held.
	FrozenInputsFreed bool
	// FP8RecomputesInputs: a compiled fp8 block (tp = 1, no LoRA) keeps
	// none of its products' inputs that are element-wise results of what
	// it keeps anyway (the two norms' outputs, the down projection's
	// input): the backward computes and casts them again. The same set
	// of inputs FrozenInputsFreed drops for frozen matrices.
	FP8RecomputesInputs bool
	// FrozenGradsFree: under LoRA the non-matrix work shrinks with the
	// work executed, the frozen weights' gradients left out (gpuflow's
	// trainer: a Qwen2-7B LoRA step spent half the non-matrix time that
	// counting those gradients gave). Without it the non-matrix work is a
	// full training pass's, as plain PyTorch's eager LoRA run on the
	// Llama-3.2-1B shape measured (autocast casts every weight, frozen
	// or not, in every pass).
	FrozenGradsFree bool
	// SelectiveKeepsProducts: selective recomputation keeps every matrix
	// product's output and the attention output and reruns only the
	// element-wise work (gpuflow's trainer), instead of Megatron's, which
	// reruns the attention core and keeps the rest.
	SelectiveKeepsProducts bool
	// SelectiveRecomputesAlternate: selective recomputation as
	// torchtitan's operator-level policy runs it: a block keeps its
	// attention output and the output of every second matrix product in
	// call order (q, v, gate, down), and its backward reruns the other
	// products (k, o, up) and every element-wise kernel of its forward,
	// instead of Megatron's rerun of the attention core alone.
	SelectiveRecomputesAlternate bool
	// RecomputeOutsideRemainder: recomputed forward work adds its
	// products, attention and element-wise kernels but nothing to the
	// remainder GEMMShare leaves (gpuflow's trainer, profiled with full
	// recomputation and without: its other kernels and copies took the
	// same time, its host gaps 1.8 ms more of a 100 ms increase; plain
	// PyTorch and FSDP2 alike, whose remainder is what is left once their
	// element-wise kernels are counted apart). Without it the remainder
	// scales with the whole pass.
	RecomputeOutsideRemainder bool
	// DTensorTP is tensor parallelism as PyTorch's DTensor plans run it in
	// gpuflow's trainer: under sequence parallelism the gathered inputs of
	// the attention and the MLP are what their matrix products keep for
	// the backward (whole, where Megatron keeps the shard and gathers it
	// again).
	DTensorTP bool
	// LossInPlace: the loss reads the bf16 logits as they are, whole or a
	// tensor-parallel rank's share, and makes no fp32 copy of them (gpuflow's
	// trainer's kernels); validations then hold 2 bytes a logit.
	LossInPlace bool
	// GathersLogits: under TP the output layer gathers the logits whole on
	// every rank and the loss runs on them, as gpuflow's trainer did
	// before it computed the loss on the vocabulary shards
	// (Input.GatheredLogits).
	GathersLogits bool
	// AllocatorSlack is what PyTorch's caching allocator reserves beyond
	// the peak it allocates, as a share of the activations: the large
	// short-lived tensors whose blocks it splits and keeps.
	AllocatorSlack float64
	// GradientPool: the memory of the gradients, freed after each
	// optimizer step, stays reserved beyond the allocated peak. FSDP2
	// makes the reduced gradients on its own stream, and the caching
	// allocator keeps a stream's freed blocks for that stream, so the next
	// forward's activations cannot reuse them.
	GradientPool bool
	// HostSPerLayer is the host time to launch one layer's forward and
	// backward for one micro-batch. A micro-batch takes at least its
	// layers' host time: small models wait on the CPU, not the GPU.
	HostSPerLayer float64
	// HostSPerLayerAlone and HostSPerStepAlone replace HostSPerLayer on
	// one GPU alone without FSDP2 (AloneWithoutFSDP2): no FSDP2 hooks run
	// per layer, and with no collective to wait at, the host runs ahead of
	// the GPU through the whole step, so the step takes the longer of the
	// GPU's work and the host's (micro-batches x layers x per layer, plus
	// per step: the batch, the optimizer and the casts). Zero where not
	// measured: the plan then keeps HostSPerLayer per micro-batch.
	HostSPerLayerAlone, HostSPerStepAlone float64
	// HostSPerTPCollectiveSpread is the spread (standard deviation) of
	// one rank's host time to each tensor-parallel collective: under
	// DTensor every collective is dispatched from Python and every rank
	// waits at it for the last of the tp ranks to arrive, which comes
	// the expected largest of tp draws later than the mean.
	HostSPerTPCollectiveSpread float64
	// CouplingExponent, where non-zero, is p in (gpu^p + host^p)^(1/p),
	// the micro-batch's time when tensor or pipeline parallelism ties the
	// ranks together inside it: near balance neither the host nor the GPU
	// runs ahead, since each rank waits at every collective for the
	// slowest. Without such ties (one GPU, data parallel) the micro-batch
	// takes the larger of the two.
	CouplingExponent float64
}

// Built-in framework names.
const (
	FrameworkMegatron  = "megatron"
	FrameworkDeepSpeed = "deepspeed"
	FrameworkEager     = "pytorch-eager"
	FrameworkFSDP2     = "fsdp2"
	// FrameworkGpuflow is gpuflow's own trainer (plugins/train), compiled;
	// FrameworkGpuflowEager the same trainer without torch.compile.
	FrameworkGpuflow      = "gpuflow"
	FrameworkGpuflowEager = "gpuflow-eager"
)

// DefaultFramework is used when a stage names none: the trainer that runs
// gpuflow's pretrain and finetune stages.
const DefaultFramework = FrameworkGpuflow

// Device memory outside tensors, measured on one H100 with PyTorch 2.11:
// CUDA context plus cuBLAS workspace after a bf16 GEMM, and the same after
// initialising NCCL (docs/estimator.md gives the command).
const (
	measuredReserveBytes     = 718_077_952
	measuredReserveNCCLBytes = 1_309_474_816
)

// Fitted figures; docs/estimator.md shows each fit and its data.
const (
	// megatronGEMMShare is fitted so that Llama 3.1 70B on 64 H100 (TP4
	// PP4 CP2 VP5) reaches the published 1,113 tokens/s per GPU, with the
	// element-wise kernels counted apart.
	megatronGEMMShare = 0.825
	// eagerGEMMShare: eager PyTorch's products, attention and counted
	// element-wise kernels fill its step (the GPU sat idle 1-5 ms of
	// 107-257 ms in the profiled steps without gradient checkpointing,
	// TestEagerProfile), so nothing is left to a remainder.
	// eagerStepBytes: the fused AdamW's kernels of the same profiles, per
	// parameter at achieved HBM bandwidth.
	eagerGEMMShare = 1
	eagerStepBytes = 33
	// eagerActivation: the reference measurements found eager activations about 2.5x of
	// 34sbh per layer; for Llama-3.2-1B the GQA/SwiGLU-aware count here is
	// 39sbh, so 2.5*34/39.
	eagerActivation = 2.18
	// fsdp2Activation: a plain bf16 Llama block (RMSNorm, SDPA, SwiGLU,
	// no dropout, as torchtitan writes it) kept 44.6 sbh per layer on one
	// H100 (testdata/measure_activations.py), over 39 counted here.
	fsdp2Activation = 44.6 / 39
	// eagerLogitBytes: fitted to the same runs' peak memory.
	eagerLogitBytes = 8
	// adamStepBytes: a fused Adam update reads fp32 weights, gradients and
	// two moments (16 bytes) and writes weights, moments and a bf16 copy
	// (14 bytes). Derived, not fitted.
	adamStepBytes = 30
)

var frameworks = map[string]Framework{
	// Megatron-LM's own accounting (theoretical_memory_usage.py): bf16
	// weights, fp32 main gradients, fp32 master weights and Adam moments,
	// 18 bytes; fp32 logits at the loss. Current release defaults:
	// Transformer Engine's fused attention, pipeline sends scattered
	// over TP, gradients reduced in fp32 under bf16 (in fp16 under fp16,
	// main gradients alike), --overlap-grad-reduce off, gradient
	// accumulation fused into the weight-gradient product, the input
	// gradients' TP all-reduce run beside the weight-gradient product.
	FrameworkMegatron: {Name: FrameworkMegatron, WeightBytes: 2, GradBytes: 4, OptimizerBytes: 12,
		GradCommBytes: 4, ParamCommBytes: 2, ActivationCoefficient: 1, LogitBytes: 4,
		GEMMShare: megatronGEMMShare, StepBytesPerParam: adamStepBytes,
		ReserveBytes: measuredReserveBytes, ReserveBytesDistributed: measuredReserveNCCLBytes,
		Attention: layout.AttentionFlash, ScatterGather: true, HalfReduceUnderFP16: true, GradBytesFollowReduce: true, GEMMsPerLayer: 4,
		ElementwiseCounted: true, AsyncTPAllReduce: true},
	// DeepSpeed as in the ZeRO paper: fp16 weights and gradients plus
	// K = 12 bytes of optimizer state, 16 bytes in all; gradients reduced
	// in the training type, overlap_comm off (its default below ZeRO-3).
	// Its pipeline engine sends each activation as 1/tp slices over the
	// tensor-parallel group (pipe_partitioned, since its first release
	// with the engine, v0.3.0) and their gradients likewise
	// (grad_partitioned, since v0.5.4); both are on by default. Before
	// each backward a stage gathers its own sent activation whole again.
	// Time figures are Megatron's (not validated for DeepSpeed), except
	// that autograd accumulates the gradients in a separate pass.
	FrameworkDeepSpeed: {Name: FrameworkDeepSpeed, WeightBytes: 2, GradBytes: 2, OptimizerBytes: 12,
		GradCommBytes: 2, ParamCommBytes: 2, ActivationCoefficient: 1, LogitBytes: 4,
		GEMMShare: megatronGEMMShare, StepBytesPerParam: adamStepBytes,
		ReserveBytes: measuredReserveBytes, ReserveBytesDistributed: measuredReserveNCCLBytes,
		Attention: layout.AttentionFlash, ScatterGather: true, RegathersOutput: true, GEMMsPerLayer: 4, SeparateGradAccumulation: true,
		ElementwiseCounted: true},
	// Plain PyTorch (Hugging Face modules, autocast over fp32 weights,
	// fp32 gradients, fused AdamW, DDP across GPUs), as the reference measurements ran it.
	FrameworkEager: {Name: FrameworkEager, WeightBytes: 4, GradBytes: 4, OptimizerBytes: 8,
		GradCommBytes: 4, ParamCommBytes: 4, ActivationCoefficient: eagerActivation, LogitBytes: eagerLogitBytes,
		GEMMShare: eagerGEMMShare, StepBytesPerParam: eagerStepBytes,
		ReserveBytes: measuredReserveBytes, ReserveBytesDistributed: measuredReserveNCCLBytes, OverlapDP: true,
		EagerElementwise: true, CastBytesPerParam: 6, GradCastBytesPerParam: 6, AccumulateBytesPerParam: 12, RecomputeBytesPerParam: 6,
		LookupsUncast: true},
	// PyTorch FSDP2 (torchtitan style): fp32 sharded weights, bf16
	// all-gathers and compute, fp32 gradient reduce-scatter, selective
	// recomputation by torchtitan's operator-level policy. Compute and
	// logits figures are eager PyTorch's (an assumption).
	FrameworkFSDP2: {Name: FrameworkFSDP2, WeightBytes: 4, GradBytes: 4, OptimizerBytes: 8,
		GradCommBytes: 4, ParamCommBytes: 2, ActivationCoefficient: fsdp2Activation, LogitBytes: eagerLogitBytes,
		GEMMShare: eagerGEMMShare, StepBytesPerParam: eagerStepBytes,
		ReserveBytes: measuredReserveBytes, ReserveBytesDistributed: measuredReserveNCCLBytes, OverlapDP: true,
		EagerElementwise: true, CastBytesPerParam: 8, GradCastBytesPerParam: 6, GradCastFollowsReduce: true,
		SelectiveRecomputesAlternate: true},
	// gpuflow's own trainer (trainer.go).
	FrameworkGpuflow:      trainer(FrameworkGpuflow, true),
	FrameworkGpuflowEager: trainer(FrameworkGpuflowEager, false),
}

// dtypeBytes is the element size of a gradient reduction type.
var dtypeBytes = map[string]float64{"fp32": 4, hardware.PrecisionBF16: 2, hardware.PrecisionFP16: 2}

// withOptions applies the layout's framework options (and fp16's
// reduction default) to the framework's defaults.
func (f Framework) withOptions(l layout.Layout) Framework {
	if l.Attention != "" {
		f.Attention = l.Attention
	}
	if l.ScatterGather != nil {
		f.ScatterGather = *l.ScatterGather
	}
	if l.OverlapGradReduce != nil {
		f.OverlapDP = *l.OverlapGradReduce
	}
	if l.GradAccumFusion != nil {
		f.SeparateGradAccumulation = !*l.GradAccumFusion
	}
	if l.AsyncTPAllReduce != nil {
		f.AsyncTPAllReduce = *l.AsyncTPAllReduce
	}
	if l.ScatterGatherGrads != nil {
		f.GradSendsWhole = !*l.ScatterGatherGrads
	}
	reduce := f.GradCommBytes
	switch {
	case dtypeBytes[l.GradReduceDType] > 0:
		reduce = dtypeBytes[l.GradReduceDType]
	case l.Precision == hardware.PrecisionFP16 && f.HalfReduceUnderFP16:
		reduce = 2
	}
	f.GradCommBytes = reduce
	if f.GradCastFollowsReduce && reduce <= 2 {
		f.GradCastBytesPerParam = 0
	}
	if f.GradBytesFollowReduce {
		f.GradBytes = reduce
	}
	return f
}

// materialized reports whether attention stores its s x s scores.
func (f Framework) materialized() bool { return f.Attention == layout.AttentionMaterialized }

// LookupFramework returns a built-in framework; "" means DefaultFramework.
func LookupFramework(name string) (Framework, error) {
	if name == "" {
		name = DefaultFramework
	}
	f, ok := frameworks[name]
	if !ok {
		return Framework{}, fmt.Errorf("unknown training framework %q; known: %v", name, FrameworkNames())
	}
	return f, nil
}

// FrameworkNames lists the built-in frameworks in sorted order.
func FrameworkNames() []string {
	names := make([]string, 0, len(frameworks))
	for n := range frameworks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// reserve is the framework's non-tensor memory for a job on gpus GPUs.
func (f Framework) reserve(gpus int) float64 {
	if gpus > 1 {
		return f.ReserveBytesDistributed
	}
	return f.ReserveBytes
}

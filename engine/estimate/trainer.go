package estimate

import (
	_ "embed"
	"fmt"

	"github.com/gpuflow/gpuflow/engine/calibration"
)

// gpuflow's own trainer (plugins/train/trainer): fp32 weights sharded by
// FSDP2 (on one GPU alone, a bf16 copy instead), bf16 gathers and compute, fp32 gradient reduction, fused AdamW,
// SDPA, blocks compiled one by one (or not, gpuflow-eager), expandable
// allocator segments. Its fitted figures are data: trainer.json, in the
// calibration format, fitted to the runs in testdata/trainer-runs.json
// (TestTrainerFit and TestTrainerCouplingFit refit them from that file and
// fail when a figure drifts from its fit). docs/estimator.md shows each
// fit.

//go:embed trainer.json
var trainerJSON []byte

// trainerFits are trainer.json's figures by framework name. The file is
// part of this package, so a broken one is a bug every test of the
// package reports, never a user's input.
var trainerFits = func() map[string]*calibration.FrameworkFit {
	f, err := calibration.Parse(trainerJSON, "engine/estimate/trainer.json")
	if err != nil || f.Frameworks[FrameworkGpuflow] == nil || f.Frameworks[FrameworkGpuflowEager] == nil {
		panic(fmt.Sprintf("engine/estimate/trainer.json lacks the trainer's figures: %v", err))
	}
	return f.Frameworks
}()

// Derived, not fitted.
const (
	// trainerLogitBytes: the loss (compiled or eager, its kernels are the
	// same) keeps the bf16 logits and writes their bf16 gradient;
	// trainerEagerFP32LogitBytes: the eager trainer's loss before it,
	// F.cross_entropy, peaked in its backward with three fp32 tensors of
	// the logits' size (log-softmax output, its gradient, the input
	// gradient; Input.EagerFP32Loss).
	trainerLogitBytes          = 4
	trainerEagerFP32LogitBytes = 12
	// trainerStepBytes: fused AdamW on fp32 reads weights, gradients and
	// two moments and writes all but the gradients (28 bytes); gradient
	// clipping reads the gradients for their norm and scales them in
	// place (12).
	trainerStepBytes = 40
	// trainerStepBytesAlone: on one GPU alone the norm reads the fp32
	// gradients (4) and one kernel does AdamW's update, the gradient
	// divided by the clipping scale as it is read, and writes the
	// compute copy's bf16 weight (30), where fused AdamW and the next
	// forward's cast of every weight would move 34.
	trainerStepBytesAlone = 34
)

// trainer is the accounting of gpuflow's trainer, compiled or eager.
func trainer(name string, compiled bool) Framework {
	fit := trainerFits[name]
	f := Framework{Name: name, WeightBytes: 4, GradBytes: 4, OptimizerBytes: 8,
		GradCommBytes: 4, ParamCommBytes: 2,
		ActivationCoefficient: fit.ActivationCoefficient, LogitBytes: trainerLogitBytes, GEMMShare: fit.GEMMShare,
		StepBytesPerParam: trainerStepBytes, StepBytesAlone: trainerStepBytesAlone, ReserveBytes: fit.ReserveBytes, ReserveBytesDistributed: fit.ReserveBytesWithPeers,
		AllocatorSlack: fit.AllocatorSlack,
		OverlapDP:      true, FSDP2: true, AloneWithoutFSDP2: true, GradientsFreed: true, FrozenInputsFreed: true, FrozenGradsFree: true, SelectiveKeepsProducts: true, RecomputeOutsideRemainder: true, DTensorTP: true, GradientPool: true,
		FP8HeadBF16: true, FP8DynamicScaling: true, FP8FrozenBase: true, LossInPlace: true, CuDNNAttention: true, LookupsRead: true,
		HostSPerLayer: fit.HostSPerLayer, HostSPerLayerAlone: fit.HostSPerLayerAlone, HostSPerStepAlone: fit.HostSPerStepAlone,
		HostSPerTPCollectiveSpread: fit.HostSPerTPCollectiveSpread, CouplingExponent: fit.CouplingExponent}
	f.CompiledElementwise = compiled
	// Measured only compiled: eager fp8 blocks keep as much as bf16's
	// (docs/estimator.md, "Memory").
	f.FP8RecomputesInputs = compiled
	return f
}

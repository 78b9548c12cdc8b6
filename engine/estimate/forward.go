package estimate

import "github.com/gpuflow/gpuflow/engine/layout"

// Forward-only work (an evaluation) runs the model forward over its
// tokens and nothing else. Every rank holds the whole model in bf16
// (the layout may only replicate it); there are no gradients, optimizer
// states or saved activations, only the layer being computed and one
// micro-batch's logits.
const (
	forwardWeightBytes = 2
	// forwardLogitBytes per logit: bf16 from the output layer, the fp32
	// copy the loss reads, and its fp32 log-softmax.
	forwardLogitBytes = 2 + 4 + 4
)

// computeForward fills an estimate of forward-only work.
func (j *job) computeForward(e *Estimate) {
	e.TrainableParams = 0
	e.FLOPsPerToken = j.flops.forward
	e.Memory = j.forwardMemory()
	j.forwardTime(e)
	j.budget(e)
	e.Goodput = nil // nothing is checkpointed, so an interruption costs a rerun
}

func (j *job) forwardMemory() Memory {
	s, l := j.in.Model, j.l
	seq, b := float64(s.SeqLen), float64(l.MicroBatch)
	layer := layerActivations(s, seq, b, 1, false, layout.RecomputeNone, j.fw.materialized())
	logits := seq * b * float64(s.Vocab) * forwardLogitBytes
	m := Memory{Weights: int64((j.stageP + j.stageA) * forwardWeightBytes), Activations: int64(layer + logits),
		Other: int64(j.fw.reserve(l.WorldSize()))}
	m.Total = m.Weights + m.Activations + m.Other
	return m
}

// forwardTime is the forward share of the training pass's compute
// model for each micro-batch, with no communication: the ranks share no
// tensors until they sum their results at the end.
func (j *job) forwardTime(e *Estimate) {
	l := j.l
	fwd, _ := j.passes(j.microCompute())
	e.StepTimeS = fwd * float64(j.micro)
	e.ComputeS = e.StepTimeS
	tokensPerStep := float64(l.GlobalBatch) * float64(j.in.Model.SeqLen)
	e.TokensPerS = tokensPerStep / e.StepTimeS
	e.TokensPerSPerGPU = e.TokensPerS / float64(l.WorldSize())
	peak := j.in.Hardware.GPU.TFLOPS[precision(l)] * 1e12
	e.MFU = e.TokensPerS * j.flops.forward / (float64(l.WorldSize()) * peak)
	e.ModelTFLOPSPerGPU = e.TokensPerSPerGPU * j.flops.forward / 1e12
	e.HardwareTFLOPSPerGPU = e.ModelTFLOPSPerGPU
}

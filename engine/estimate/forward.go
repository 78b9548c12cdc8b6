package estimate

import "github.com/gpuflow/gpuflow/engine/layout"

// Forward-only work (an evaluation) runs the model forward over its
// tokens and nothing else. Every rank holds the whole model in bf16, or,
// where the layout shards the weights (fsdp = true or zero = 3, over
// several ranks), its 1/dp share of them and what FSDP2 gathers for the
// forward; there are no gradients, optimizer states or saved
// activations, only the layer being computed and one micro-batch's
// logits.
const (
	forwardWeightBytes = 2
	// forwardLogitBytes per logit: bf16 from the output layer, the fp32
	// copy the loss reads, and its fp32 log-softmax.
	forwardLogitBytes = 2 + 4 + 4
)

// computeForward fills an estimate of forward-only work.
func (j *job) computeForward(e *Estimate) {
	e.TrainableParams = 0
	e.FLOPsPerToken = j.flops.modelForward
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
	held, gathered := j.forwardWeights()
	m := Memory{Weights: int64(held), Activations: int64(layer + logits), Other: int64(j.fw.reserve(l.WorldSize()) + gathered)}
	m.Total = m.Weights + m.Activations + m.Other
	return m
}

// forwardWeights is what a rank holds of the weights in bf16, and what it
// holds gathered besides while a forward runs. Sharded, the root module
// (embeddings, final norm, output), gathered for the whole forward, and
// two layers: the one computing and the next, whose gather overlaps it.
func (j *job) forwardWeights() (held, gathered float64) {
	whole := (j.stageP + j.stageA) * forwardWeightBytes
	if j.l.ShardingStage() < 3 || j.dataShards() < 2 {
		return whole, 0
	}
	layers := j.counts.PerLayer * j.heavyLayers / float64(j.l.TP)
	root := (j.stageP - layers) * forwardWeightBytes
	layer := (layers + j.stageA) / j.heavyLayers * forwardWeightBytes
	return whole / float64(j.dataShards()), root + 2*layer
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
	e.MFU = e.TokensPerS * j.flops.modelForward / (float64(l.WorldSize()) * peak)
	e.ModelTFLOPSPerGPU = e.TokensPerSPerGPU * j.flops.modelForward / 1e12
	e.HardwareTFLOPSPerGPU = e.TokensPerSPerGPU * j.flops.forward / 1e12
}

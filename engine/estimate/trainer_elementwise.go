package estimate

import (
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
)

// Bytes moved per activation element by the element-wise kernels
// torch.compile makes of one of gpuflow's trainer blocks (bf16
// activations; each fused kernel reads its inputs and writes its outputs
// once; the matrix products and attention are library kernels of their
// own), forward and backward, and what a fully recomputed forward adds.
// The compiled backward recomputes what the forward did not keep (the
// norms' outputs the weight gradients read, the SwiGLU product), so
// selective recomputation, which keeps the products, adds nothing.
//
// Per hidden element: forward, the attention norm reads and writes (4),
// the first residual add fused with the MLP norm reads two and writes two
// (8), the second residual add reads two and writes one (6): 18.
// Backward, each norm's kernel reads its products' input gradients (three
// for q, k and v, two for gate and up), its input and the residual's
// gradient, and writes its input gradient and its recomputed output for
// the weight-gradient products: 14 and 12, 26.
//
// Per query and key element (rotary positions, the Llama family only):
// forward reads and writes (4), backward the same on the gradient (4).
//
// Per FFN element: SwiGLU reads gate and up and writes their product (6);
// its backward reads gate, up and the product's gradient and writes both
// gradients and the recomputed product for the down product's weight
// gradient (12). GELU with its bias reads and writes (4); its backward
// reads the gradient and the input and writes the input gradient and the
// recomputed output (8).
//
// Per hidden element of a token outside the blocks: the final norm (4
// forward, 6 backward) and the embedding's lookup and its gradient's
// scatter (4 and 4).
//
// Per logit element: the loss's kernels (the trainer's xent.py, on the
// whole vocabulary or on a tensor-parallel rank's share of it) read the
// bf16 logits once for their maximum and sum (one online pass, 2), and
// the backward reads them again and writes their gradient (4).
const (
	trainerHiddenBytes, trainerHiddenRecomputeBytes = 44, 18
	trainerRotaryBytes, trainerRotaryRecomputeBytes = 8, 4
	trainerSwiGLUBytes, trainerSwiGLURecomputeBytes = 18, 6
	trainerGELUBytes, trainerGELURecomputeBytes     = 12, 4
	trainerOutsideHiddenBytes                       = 18
	trainerLossBytes                                = 6
)

// trainerElementwiseTime is one micro-batch's element-wise kernels on this
// GPU at achieved HBM bandwidth for gpuflow's compiled trainer
// (Framework.CompiledElementwise). Their cost per token grows with the
// hidden size and the vocabulary where the products' grows with the
// hidden size squared (and times the vocabulary), so they weigh on narrow
// models: a third of the products' time at hidden 768 (the lab shape),
// 12% at 2,048 (Llama-3.2-1B; TestTrainerElementwiseShareOfProducts).
// Under tensor parallelism the norms run over the whole width on every
// rank unless sequence parallelism splits them; the rotary and FFN work is
// split with the heads and the FFN.
func (j *job) trainerElementwiseTime() float64 {
	hbm := j.hbm()
	if !j.fw.CompiledElementwise || hbm <= 0 {
		return 0
	}
	l, s := j.l, j.in.Model
	full := l.Recompute == layout.RecomputeFull
	hidden, rotary, ffn := withRecompute(trainerHiddenBytes, trainerHiddenRecomputeBytes, full), 0.0, 0.0
	if s.Activation == model.ActivationSwiGLU {
		rotary = withRecompute(trainerRotaryBytes, trainerRotaryRecomputeBytes, full)
		ffn = withRecompute(trainerSwiGLUBytes, trainerSwiGLURecomputeBytes, full)
	} else {
		ffn = withRecompute(trainerGELUBytes, trainerGELURecomputeBytes, full)
	}
	width := float64(l.TP)
	if l.SequenceParallel {
		width = 1
	}
	h, f := float64(s.Hidden), float64(s.FFNHidden)
	qk := float64((s.Heads + s.KVHeads) * s.HeadDim())
	perLayer := hidden*width*h + rotary*qk + ffn*f
	outside := trainerOutsideHiddenBytes*width*h + j.lossBytes()*float64(s.Vocab)
	return j.tokensPerGPU() * (float64(s.Layers)*perLayer + outside) / hbm
}

// lossBytes is the loss's bytes per logit element of this GPU's tokens
// (tokensPerGPU divides them over TP): the vocabulary's share under TP,
// the whole vocabulary on every rank when the logits are gathered.
func (j *job) lossBytes() float64 {
	if j.fw.GathersLogits {
		return trainerLossBytes * float64(j.l.TP)
	}
	return trainerLossBytes
}

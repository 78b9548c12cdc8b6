package estimate

import (
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
)

// Bytes moved per activation element by the element-wise kernels of an
// eager PyTorch block under autocast over fp32 weights (every operator a
// kernel of its own that reads its inputs and writes its output; the
// matrix products and attention are library kernels), forward and
// backward, and the forward's share, which a recomputed forward runs
// again. The embedding's fp32 output makes the residual stream fp32;
// autocast runs the products in bf16, casting their inputs, and layer
// norm in fp32. Hugging Face's Llama and torchtitan's write the same
// operators, so the SwiGLU activation marks the Llama family (RMSNorm,
// rotary positions, separate q, k and v products), GELU the GPT family
// (LayerNorm, learned positions, one fused qkv product).
//
// Llama family, per hidden element, replicated under TP without sequence
// parallelism: each RMSNorm forward squares its fp32 input (8), takes the
// mean (4), scales by the reciprocal root (8), casts to bf16 (6), takes
// the fp32 weight's product, which promotes to fp32 (6), and the next
// product casts it back (6): 38; backward, the cast gradients (6, 6, 6),
// the weight's two gradients (16), the scaling's two (16), the square's
// and the mean's (16) and the two paths summed (12): 78. Two residual
// adds read the fp32 stream and the bf16 branch and write fp32 (10 each);
// backward each casts the branch's gradient to bf16 (6) and sums the
// stream's gradient with the norm's (12). 288 in all, 96 forward. On the
// TP shard, attention's output made contiguous for the output product (4
// forward, 4 backward). Per query and key element, the rotary positions:
// the products by cosines and sines (8), the half rotation (a negation
// and a concatenation, 6) and the sum (6), 20 forward; backward the
// products' gradients (8), the rotation's (10) and the paths summed (6).
// Per FFN element, SiLU (4) and its product with the up branch (6), 10
// forward; backward the product's two gradients (12) and SiLU's (6).
// Outside the layers, per hidden element: the final norm (116) and the
// embedding's fp32 lookup and its gradient's scatter (16).
//
// GPT family, per hidden element, replicated: each LayerNorm reads and
// writes fp32 (8) and the next product casts its output (6); the residual
// adds as above (10 each): 48 forward; backward, the casts (6 and 6 per
// norm), LayerNorm's input gradient (12) and its weight and bias
// gradients (8), and the residual adds' casts (6 each) and sums (12
// each): 88. On the shard: attention's output made contiguous (4, 4) and
// the backward's q, k and v gradients concatenated into the fused
// product's (12). Per FFN element, GELU reads and writes (4), its
// backward reads the gradient and the input and writes (6). Outside the
// layers: the final norm (40), the fp32 lookups of token and position
// (8, and their sum 12) and their gradients (12).
//
// Per logit element (both): the loss casts the bf16 logits to fp32 (6),
// takes their log-softmax (reading them twice and writing once, 12), and
// in the backward writes the loss's gradient (4), the log-softmax's (12)
// and the cast back (6): 40.
type eagerBytes struct {
	replicated, replicatedForward float64
	shard, shardForward           float64
	rotary, rotaryForward         float64
	ffn, ffnForward               float64
	outside                       float64
}

var (
	eagerLlamaBytes = eagerBytes{replicated: 288, replicatedForward: 96, shard: 8, shardForward: 4,
		rotary: 44, rotaryForward: 20, ffn: 28, ffnForward: 10, outside: 132}
	eagerGPTBytes = eagerBytes{replicated: 136, replicatedForward: 48, shard: 20, shardForward: 4,
		ffn: 10, ffnForward: 4, outside: 72}
)

const eagerLossBytes = 40

// eagerTrafficFactor is what eager PyTorch's element-wise kernels move
// over the bytes counted above (the casts autocast inserts around the
// products and norms, the fp32 residual stream of fp32 weights, the
// copies and reductions autograd adds, and strided copies that do not
// reach full bandwidth), and eagerKernelS what each of those kernels costs
// beyond its bytes (launch and tail). Measured, not derived: least squares of the profiled time of every
// kernel other than the products, attention and the optimizer, less the
// per-weight traffic, against the counted bytes at achieved HBM bandwidth
// and the kernel count, over six profiled steps on one H100 (hidden 2,048
// to 7,168, Llama and GPT blocks, one fully recomputed;
// TestEagerProfile).
//
// eagerBandwidthCap is the most bandwidth those kernels reach on any GPU:
// on an H200, whose HBM is 1.43 times an H100's over the same SMs, the
// same profiled kernels took 0.82 of the H100's time, not 0.70; fitted to
// the H200's profiles with the H100's factor and kernel cost held.
const (
	eagerTrafficFactor = 1.572
	eagerKernelS       = 1.21e-6
	eagerBandwidthCap  = 3.6e12
)

// Kernels outside the products and attention per layer and micro-batch
// in an eager PyTorch step, forward and backward, as torch.profiler
// counted them (TestEagerProfile's profiles; memory copies and sets
// included): Hugging Face's Llama block 121 (its norms alone are eight
// kernels each way) and 256 outside the layers, a plain GPT block 42 and
// 57. A recomputed forward adds its share again: 37 of the Llama block's
// 121 under gradient checkpointing, assumed the same share of a GPT
// block's.
const (
	eagerLlamaKernels, eagerLlamaOutsideKernels = 121, 256
	eagerGPTKernels, eagerGPTOutsideKernels     = 42, 57
	eagerRecomputedKernelShare                  = 37.0 / 121
)

// eagerElementwiseTime is one micro-batch's element-wise kernels on this
// GPU for a framework that runs them unfused
// (Framework.EagerElementwise): the counted bytes by eagerTrafficFactor,
// the framework's traffic per weight (eagerWeightBytes), and eagerKernelS
// for each kernel, at the bandwidth those kernels reach (eagerBandwidthCap).
// Their cost per token grows with the hidden size where the products'
// grows with its square, so no flat share of the products holds across
// widths: on an H100 they take 129% of the products' time on the
// Llama-3.2-1B shape (hidden 2,048, its 128,256-entry vocabulary's loss
// included; profiled 139%) and 19% on a 7,168-wide GELU model
// (TestEagerElementwiseShareOfProducts). Under tensor parallelism the
// norms run over the whole width on every rank unless sequence
// parallelism splits them; the rotary and FFN work is split with the
// heads and the FFN.
func (j *job) eagerElementwiseTime() float64 {
	hbm := j.hbm()
	if !j.fw.EagerElementwise || hbm <= 0 {
		return 0
	}
	return (eagerTrafficFactor*j.eagerActivationBytes()+j.eagerWeightBytes())/min(hbm, eagerBandwidthCap) + j.eagerKernels()*eagerKernelS
}

// eagerKernels is the element-wise kernels one micro-batch launches on
// this GPU, its recomputed forward's included.
func (j *job) eagerKernels() float64 {
	l, s := j.l, j.in.Model
	perLayer, outside := float64(eagerGPTKernels), float64(eagerGPTOutsideKernels)
	if s.Activation != model.ActivationGELU {
		perLayer, outside = eagerLlamaKernels, eagerLlamaOutsideKernels
	}
	if l.Recompute == layout.RecomputeFull || (l.Recompute == layout.RecomputeSelective && j.fw.SelectiveRecomputesAlternate) {
		perLayer *= 1 + eagerRecomputedKernelShare
	}
	// The loss, final norm and embedding, spread over the stages as
	// eagerActivationBytes spreads their bytes.
	return j.layers*perLayer + outside/float64(j.l.PP)
}

// eagerActivationBytes is the counted bytes of one micro-batch's
// element-wise kernels on this GPU (the table above).
func (j *job) eagerActivationBytes() float64 {
	l, s := j.l, j.in.Model
	t := eagerGPTBytes
	if s.Activation != model.ActivationGELU {
		t = eagerLlamaBytes
	}
	// Selective recomputation by alternate products reruns the forward's
	// element-wise kernels as full recomputation does.
	if l.Recompute == layout.RecomputeFull ||
		(l.Recompute == layout.RecomputeSelective && j.fw.SelectiveRecomputesAlternate) {
		t.replicated += t.replicatedForward
		t.shard += t.shardForward
		t.rotary += t.rotaryForward
		t.ffn += t.ffnForward
	}
	width := float64(l.TP)
	if l.SequenceParallel {
		width = 1
	}
	h, f := float64(s.Hidden), float64(s.FFNHidden)
	qk := float64((s.Heads + s.KVHeads) * s.HeadDim())
	perLayer := t.replicated*width*h + t.shard*h + t.rotary*qk + t.ffn*f
	outside := t.outside*width*h + eagerLossBytes*float64(s.Vocab)
	return j.tokensPerGPU() * (float64(s.Layers)*perLayer + outside)
}

// eagerWeightBytes is one micro-batch's traffic per weight on the GPU
// that moves the most: the first pipeline stage's (the loaded rank) or,
// with several stages, the last's, which multiplies the output layer.
func (j *job) eagerWeightBytes() float64 {
	first := j.rankWeightBytes(j.stageP, j.stageA, j.heavyLayers, j.heavyFirst)
	if j.l.PP == 1 {
		return first
	}
	last := j.rank(j.l.PP - 1)
	return max(first, j.rankWeightBytes(last.params, last.adapters, last.layers, false))
}

// rankWeightBytes is one micro-batch's traffic per weight on a rank with
// these parameters, adapters and layers: the casts of every weight its
// products multiply (Framework.CastBytesPerParam; under LookupsUncast an
// input embedding only looked up is read by index in fp32, neither
// copied nor its gradient cast), the gradients' casts for the weights it
// trains (under LoRA the adapters alone) and, averaged over the step,
// their accumulation after the first micro-batch, and under full
// recomputation the layers' casts again.
func (j *job) rankWeightBytes(params, adapters, layers float64, first bool) float64 {
	fw := j.fw
	lookedUp := 0.0
	if fw.LookupsUncast && first && !(j.l.PP == 1 && j.in.Model.TiedEmbeddings) {
		lookedUp = j.counts.Embedding / float64(j.l.TP)
	}
	// The gradients cast are those of the multiplied weights it trains;
	// the accumulated ones are all it trains, a looked-up table's too.
	multiplied, castTrained, trained := params-lookedUp, params-lookedUp, params
	if j.in.LoRA != nil {
		castTrained, trained = adapters, adapters
	}
	m := float64(max(1, j.l.GradAccumulation()))
	bytes := (multiplied+adapters)*fw.CastBytesPerParam + castTrained*fw.GradCastBytesPerParam +
		trained*fw.AccumulateBytesPerParam*(m-1)/m
	if j.l.Recompute == layout.RecomputeFull {
		bytes += j.counts.PerLayer * layers / float64(j.l.TP) * fw.RecomputeBytesPerParam
	}
	return bytes
}

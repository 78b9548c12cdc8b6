package estimate

import (
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// flops holds per-token FLOP counts of one training step.
type flops struct {
	// model is the conventional count MFU is quoted in: 6N + 12*L*h*s, or
	// 4N + 6*N_adapter + 12*L*h*s with LoRA (frozen weights need no weight
	// gradients). The attention term counts the full s*s square, not the
	// causal half (a sliding window's span instead of s where it is
	// shorter: counts.AttentionFLOPs).
	model float64
	// executed adds the recomputed forward work.
	executed float64
	// fullEquivalent is executed with the frozen weights' gradients
	// counted too: the non-matrix work of a framework whose LoRA does not
	// save it (Framework.FrozenGradsFree) scales with it.
	fullEquivalent float64
	// forward is the forward pass alone, executed once; modelForward the
	// same in the model FLOPs' convention (lookups counted as products),
	// what a forward-only estimate quotes its MFU in.
	forward, modelForward float64
	// attention is the attention-core share of executed (QK^T and AV,
	// forward and backward, and the forward again where recomputed);
	// attentionForward its forward, once, and recomputedAttention the
	// forward run again.
	attention, attentionForward, recomputedAttention float64
	// recomputed is the forward work run again (executed's and
	// fullEquivalent's share of it).
	recomputed float64
	// adapters is the LoRA adapters' share of executed: their forward and
	// both backward products, and the forward again when the layers are
	// recomputed in full.
	adapters float64
}

// flopsInput is what a step's FLOP count depends on.
type flopsInput struct {
	// params is the whole model, layerParams its transformer layers
	// alone (what full recomputation runs again), adapters LoRA's.
	params, layerParams, adapters float64
	// lookups are the parameters params counts that the step reads by
	// index instead of multiplying (Framework.LookupsRead): they stay in
	// the model FLOPs, as MFU is quoted, and leave the executed ones.
	lookups float64
	// attention is the attention core's work per token,
	// counts.AttentionFLOPs.
	attention float64
	recompute string
	// keepsProducts is Framework.SelectiveKeepsProducts: its selective
	// recomputation reruns no matrix product.
	keepsProducts bool
	// alternateParams, under Framework.SelectiveRecomputesAlternate, is
	// the parameters of the products selective recomputation reruns (every
	// second one of each block), over all layers.
	alternateParams float64
}

// countFLOPs counts a step's work per token.
func countFLOPs(in flopsInput) flops {
	attn := in.attention
	attnFwd := attn / 3
	params, adapters := in.params, in.adapters
	products := params - in.lookups
	f := flops{attention: attn, model: counts.ModelFLOPs(params, adapters, attn), forward: 2*products + 2*adapters + attnFwd,
		modelForward: 2*params + 2*adapters + attnFwd}
	f.fullEquivalent = 6*(products+adapters) + attn
	var extra, extraAttention float64
	switch {
	case in.recompute == layout.RecomputeSelective && in.keepsProducts:
		// Only element-wise work runs again, fused into the backward by
		// torch.compile: the one-GPU selective-recompute run of
		// testdata/trainer-runs.json measured no cost.
	case in.recompute == layout.RecomputeSelective && in.alternateParams > 0:
		// Every second product runs again; the attention output is kept.
		extra = 2 * in.alternateParams
	case in.recompute == layout.RecomputeSelective:
		extra, extraAttention = attnFwd, attnFwd
	case in.recompute == layout.RecomputeFull:
		// The layers' forward, not the embeddings' or the output
		// layer's, which no checkpoint wraps.
		extra, extraAttention = 2*in.layerParams+2*adapters+attnFwd, attnFwd
	}
	f.executed = counts.ModelFLOPs(products, adapters, attn) + extra
	f.adapters = 6 * adapters
	if in.recompute == layout.RecomputeFull {
		f.adapters += 2 * adapters
	}
	f.fullEquivalent += extra
	f.recomputed = extra
	f.attentionForward, f.recomputedAttention = attnFwd, extraAttention
	f.attention += f.recomputedAttention
	return f
}

// countFLOPs counts this job's work per token with the given parameters
// read by index rather than multiplied.
func (j *job) countFLOPs(lookups float64) flops {
	in := j.in
	return countFLOPs(flopsInput{params: j.params, layerParams: j.counts.PerLayer * float64(in.Model.Layers), adapters: j.adapters,
		lookups: lookups, attention: counts.AttentionFLOPs(countShape(in.Model)), recompute: in.Layout.Recompute,
		keepsProducts: j.fw.SelectiveKeepsProducts, alternateParams: j.alternateParams()})
}

// alternateParams is, under Framework.SelectiveRecomputesAlternate, the
// parameters of the products a block's selective recomputation reruns:
// every second one in the order the block calls them. A Llama block calls
// q, k, v, o, gate, up and down and reruns k, o and up; a GPT block, with
// one fused qkv product, calls qkv, o and the MLP's two and reruns o and
// the MLP's second (down). Over all layers; zero for any other framework.
func (j *job) alternateParams() float64 {
	if !j.fw.SelectiveRecomputesAlternate {
		return 0
	}
	s := j.in.Model
	h, d := float64(s.Hidden), float64(s.HeadDim())
	perLayer := float64(s.Heads)*d*h + h*float64(s.FFNHidden)
	if s.Activation != model.ActivationGELU {
		perLayer += h * float64(s.KVHeads) * d
	}
	return perLayer * float64(s.Layers)
}

// lookups is what countFLOPs leaves out of the executed work under
// Framework.LookupsRead on a single stage without tensor parallelism: an
// untied input embedding and GPT-2's learned positions, which the step
// reads by token id and position instead of multiplying (a tied embedding
// is the output layer's weight, a product, and counted once already).
func (j *job) lookups() float64 {
	if !j.fw.LookupsRead || j.l.TP > 1 || j.l.PP > 1 {
		return 0
	}
	n := countShape(j.in.Model).Positions()
	if !j.in.Model.TiedEmbeddings {
		n += j.counts.Embedding
	}
	return n
}

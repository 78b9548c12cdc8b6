package estimate

import "github.com/gpuflow/gpuflow/engine/layout"

// flops holds per-token FLOP counts of one training step.
type flops struct {
	// model is the conventional count MFU is quoted in: 6N + 12*L*h*s, or
	// 4N + 6*N_adapter + 12*L*h*s with LoRA (frozen weights need no weight
	// gradients). The attention term counts the full s*s square, not the
	// causal half.
	model float64
	// executed adds the recomputed forward work.
	executed float64
	// fullEquivalent is executed with the frozen weights' gradients
	// counted too: non-matmul work scales with it, not with LoRA's savings.
	fullEquivalent float64
	// forward is the forward pass alone, executed once.
	forward float64
	// attention is the attention-core share of executed (QK^T and AV,
	// forward and backward).
	attention float64
}

// countFLOPs counts a step's work per token. keepsProducts is
// Framework.SelectiveKeepsProducts: its selective recomputation reruns no
// matrix product, only the forward's element-wise work.
func countFLOPs(params, adapters float64, layers, qDim, seq int, recompute string, keepsProducts bool) flops {
	attn := 12 * float64(layers) * float64(qDim) * float64(seq)
	attnFwd := attn / 3
	f := flops{attention: attn}
	if adapters > 0 {
		f.model = 4*params + 6*adapters + attn
		f.forward = 2*params + 2*adapters + attnFwd
	} else {
		f.model = 6*params + attn
		f.forward = 2*params + attnFwd
	}
	f.fullEquivalent = 6*(params+adapters) + attn
	var extra float64
	switch {
	case recompute == layout.RecomputeSelective && keepsProducts:
		// No FLOPs, but the forward's non-matrix work again.
		f.executed = f.model
		f.fullEquivalent += f.forward - attnFwd
		return f
	case recompute == layout.RecomputeSelective:
		extra = attnFwd
	case recompute == layout.RecomputeFull:
		extra = f.forward
	}
	f.executed = f.model + extra
	f.fullEquivalent += extra
	f.attention += min(extra, attnFwd)
	return f
}

package estimate

import (
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// Memory is the predicted peak memory of the most loaded GPU, in bytes.
type Memory struct {
	Weights     int64 `json:"weights"`
	Gradients   int64 `json:"gradients"`
	Optimizer   int64 `json:"optimizer"`
	Activations int64 `json:"activations"`
	// Other is memory outside the model states and activations: CUDA
	// context, cuBLAS and NCCL buffers, and gathered ZeRO-3/FSDP layers.
	Other int64 `json:"other"`
	Total int64 `json:"total"`
}

// modelStates are weights, gradients and optimizer states per GPU.
type modelStates struct{ weights, gradients, optimizer float64 }

// shardedStates applies ZeRO: stage 1 shards optimizer states over the
// data-parallel group, stage 2 also gradients, stage 3 also weights;
// under FSDP2 every stage from 1 shards all three. frozen parameters
// (LoRA's base model) carry weights only.
func shardedStates(fw Framework, trained, frozen float64, stage, shards int) modelStates {
	n := float64(shards)
	div := func(atLeast int) float64 {
		if stage >= atLeast || (fw.FSDP2 && stage >= 1) {
			return n
		}
		return 1
	}
	return modelStates{
		weights:   (trained + frozen) * fw.WeightBytes / div(3),
		gradients: trained * fw.GradBytes / div(2),
		optimizer: trained * fw.OptimizerBytes / div(1),
	}
}

// layerActivations is Korthikanti et al.'s count of bytes one transformer
// layer keeps for backward, for one micro-batch of seq tokens and batch b,
// generalised to GQA (K and V shrink with kv heads) and SwiGLU (the gate
// and up outputs both kept). With 4h GELU and no GQA it is the paper's
// sbh(34 + 5as/h). scores keeps the a*s*s attention matrices, which flash
// attention never stores.
func layerActivations(s model.Shape, seq, b float64, tp int, sp bool, recompute string, scores bool) float64 {
	h := float64(s.Hidden)
	sbh := seq * b * h
	t := float64(tp)
	if recompute == layout.RecomputeFull {
		if sp {
			return 2 * sbh / t
		}
		return 2 * sbh
	}
	// Replicated across TP without sequence parallelism: the two layer
	// norms' inputs (4), the attention and MLP inputs (4), two dropout
	// masks (2).
	const replicated = 10.0
	kvRatio := float64(s.KVHeads) / float64(s.Heads)
	ffnRatio := float64(s.FFNHidden) / h
	mlp := 4 * ffnRatio // GELU input and second matmul's input
	if s.Activation != model.ActivationGELU {
		mlp = 6 * ffnRatio // gate and up outputs, second matmul's input
	}
	// Q (2), K and V (4*kvRatio), attention output (2), MLP internals.
	sharded := 4 + 4*kvRatio + mlp
	if scores && recompute != layout.RecomputeSelective {
		// softmax output (2), its dropout mask (1) and output (2), per head.
		sharded += 5 * float64(s.Heads) * seq / h
	}
	if sp {
		return sbh * (replicated + sharded) / t
	}
	return sbh * (replicated + sharded/t)
}

// productActivations is what a layer keeps under selective recomputation
// that saves every matrix product's output and the attention output
// (Framework.SelectiveKeepsProducts), in bf16: the layer's input (2, split
// under sequence parallelism), the q, k and v projections (2 + 4*kv/heads),
// the attention output (2), gate and up (4*ffn/h), all split over TP, and
// the o and down projections' outputs (2 each), which a row-parallel layer
// holds whole before its reduction.
func productActivations(s model.Shape, seq, b float64, tp int, sp bool) float64 {
	h := float64(s.Hidden)
	sharded := 2 + 4*float64(s.KVHeads)/float64(s.Heads) + 2 + 4*float64(s.FFNHidden)/h
	return keptOutputs(seq*b*h, tp, sp, sharded, 4)
}

// keptOutputs is what a layer keeps of its outputs under selective
// recomputation, in bytes: its bf16 input (2 per sbh, split over TP only
// under sequence parallelism), sharded bytes per sbh split over TP, and
// whole bytes per sbh held on every TP rank.
func keptOutputs(sbh float64, tp int, sp bool, sharded, whole float64) float64 {
	t := float64(tp)
	input := 2.0
	if sp {
		input /= t
	}
	return sbh * (input + sharded/t + whole)
}

// alternateActivations is what a layer keeps under selective
// recomputation by alternate products (Framework.SelectiveRecomputesAlternate),
// in bf16: the layer's input (2, split under sequence parallelism), the
// outputs of the products it does not rerun and the attention output (2),
// split over TP. A Llama block keeps q (2), v (2*kv/heads) and gate
// (2*ffn/h), and the down projection's output (2), which a row-parallel
// layer holds whole before its reduction; a GPT block keeps its fused qkv
// (2 + 4*kv/heads) and the MLP's first product (2*ffn/h).
func alternateActivations(s model.Shape, seq, b float64, tp int, sp bool) float64 {
	h := float64(s.Hidden)
	kv := float64(s.KVHeads) / float64(s.Heads)
	sharded := 2 + 4*kv + 2 + 2*float64(s.FFNHidden)/h
	whole := 0.0
	if s.Activation != model.ActivationGELU {
		sharded, whole = 2+2*kv+2+2*float64(s.FFNHidden)/h, 2
	}
	return keptOutputs(seq*b*h, tp, sp, sharded, whole)
}

// inFlight is how many micro-batches' activations the first pipeline
// stage holds at its peak: one without pipelining, min(pp, m) under 1F1B,
// and Megatron's pp*(1 + (pp-1)/(pp*vp)) when interleaved.
func inFlight(pp, vp, micro int) float64 {
	switch {
	case pp == 1:
		return 1
	case vp > 1:
		p := float64(pp)
		return p * (1 + (p-1)/(p*float64(vp)))
	default:
		return float64(min(pp, micro))
	}
}

// activationInput gathers what activation memory depends on.
type activationInput struct {
	shape      model.Shape
	layout     layout.Layout
	fw         Framework
	coeff      float64 // the framework's activation coefficient, maybe calibrated
	micro      int     // micro-batches per step per DP rank
	flashAttn  bool
	layerCount float64 // layers on the pipeline rank being costed
	// adapted names the matrices with LoRA adapters; nil trains all.
	adapted map[string]bool
	// lastStage is the last of several pipeline stages: one micro-batch
	// in flight under plain 1F1B (inFlight when set), and the output
	// layer's input and logits.
	lastStage bool
	// middleStage is a pipeline stage between the first and the last:
	// its layers alone, for inFlight micro-batches.
	middleStage bool
	inFlight    float64
}

// activations is a stage's activation memory: the first stage's layers
// for every in-flight micro-batch and the embedding output, and with one
// pipeline stage the output layer's input and logits too (Megatron's own
// formula makes the same choices); the last of several stages holds one
// micro-batch and the output layer's input and logits.
func activations(in activationInput) float64 {
	l, s := in.layout, in.shape
	seq := float64(s.SeqLen) / float64(l.CP)
	b := float64(l.MicroBatch)
	h := float64(s.Hidden)
	t := float64(l.TP)
	sp := l.SequenceParallel && l.TP > 1
	n := inFlight(l.PP, layout.VirtualStages(l), in.micro)
	switch {
	case in.lastStage && in.inFlight > 0:
		n = in.inFlight
	case in.lastStage:
		n = 1
	case in.middleStage:
		n = in.inFlight
	}
	perLayer := layerActivations(s, seq, b, l.TP, sp, l.Recompute, !in.flashAttn)
	var total, recomputed float64
	switch {
	case l.Recompute == layout.RecomputeSelective && in.fw.SelectiveKeepsProducts:
		// The kept products for every layer; the one layer being
		// recomputed holds its element-wise results besides.
		kept := productActivations(s, seq, b, l.TP, sp)
		total = in.coeff * kept * in.layerCount * n
		recomputed = in.coeff * (layerActivations(s, seq, b, l.TP, sp, layout.RecomputeNone, !in.flashAttn) - kept)
	case l.Recompute == layout.RecomputeSelective && in.fw.SelectiveRecomputesAlternate:
		// The kept outputs for every layer, exact tensors; the one layer
		// being recomputed holds the rest of its set besides, scaled by
		// the framework's coefficient.
		kept := alternateActivations(s, seq, b, l.TP, sp)
		total = kept * in.layerCount * n
		recomputed = in.coeff * (layerActivations(s, seq, b, l.TP, sp, layout.RecomputeNone, !in.flashAttn) - kept)
	case l.Recompute == layout.RecomputeFull:
		// Stored layer inputs are exact tensors; the one layer being
		// recomputed holds its full set.
		total = perLayer * in.layerCount * n
		recomputed = in.coeff * layerActivations(s, seq, b, l.TP, sp, layout.RecomputeNone, !in.flashAttn)
	default:
		switch {
		case in.fw.FrozenInputsFreed && in.adapted != nil:
			perLayer -= unkeptInputs(s, seq, b, l.TP, sp, in.adapted)
		case in.fw.FP8RecomputesInputs && precision(l) == hardware.PrecisionFP8 && l.TP == 1 && in.adapted == nil:
			perLayer -= unkeptInputs(s, seq, b, l.TP, sp, nil)
		}
		if sp && in.fw.DTensorTP {
			// The attention and MLP inputs, gathered from the sequence
			// shards, are kept whole for the backward.
			perLayer += 4 * seq * b * h * (1 - 1/t)
		}
		total = in.coeff * perLayer * in.layerCount * n
	}
	if !in.lastStage && !in.middleStage {
		embed := (seq*b*h + 8*seq*b) * n
		if sp {
			embed /= t
		}
		total += embed
	}
	if l.PP == 1 || in.lastStage {
		// The logits and their gradient are freed before the backward
		// recomputes its first layer. Under TP each rank holds its share
		// of the vocabulary (Megatron's vocabulary-parallel loss, PyTorch's
		// loss parallelism in gpuflow's trainer), unless the output layer
		// gathers them whole.
		logits := seq * b * float64(s.Vocab) * in.fw.LogitBytes
		switch {
		case !in.fw.GathersLogits:
			logits /= t
		case l.TP > 1:
			// The output layer's own bf16 shard is held beside the
			// gathered whole.
			logits += seq * b * float64(s.Vocab) * 2 / t
			if in.lastStage {
				// Measured, cause not isolated: under the pipeline
				// schedule the last stage held about an fp32 copy of
				// the gathered logits more (X, X4: 5.0 and 11.5 GiB
				// over the first stage, where 2.1 and 4.3 were counted).
				logits += seq * b * float64(s.Vocab) * 4
			}
		}
		return total + max(recomputed, 4*seq*b*h/t+logits)
	}
	return total + recomputed
}

// unkeptInputs is what a layer does not keep of its products' bf16
// inputs: the attention input unless q, k or v is in kept, the MLP input
// unless gate or up is, and the down projection's input unless it is.
// Under LoRA autograd saves no input of a frozen matrix (kept: the
// adapted ones); a compiled fp8 block keeps none of the three and
// computes them again for its backward (kept: none). The attention
// output stays: the attention kernel keeps it for its own backward.
func unkeptInputs(s model.Shape, seq, b float64, tp int, sp bool, kept map[string]bool) float64 {
	sbh := seq * b * float64(s.Hidden)
	t := float64(tp)
	var replicated, sharded float64
	if !kept["q"] && !kept["k"] && !kept["v"] {
		replicated += 2
	}
	if !kept["gate"] && !kept["up"] {
		replicated += 2
	}
	if !kept["down"] {
		sharded += 2 * float64(s.FFNHidden) / float64(s.Hidden)
	}
	if sp {
		return sbh * (replicated + sharded) / t
	}
	return sbh * (replicated + sharded/t)
}

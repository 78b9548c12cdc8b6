package estimate

import (
	"math"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// defaultGEMMEfficiency is 8192^3 GEMM throughput over dense datasheet
// peak on H200 (reference measurements: 746 bf16, 721 fp16, 1406 fp8, 382 tf32
// TFLOP/s), used on every GPU until a benchmark stage calibrates it.
var defaultGEMMEfficiency = map[string]float64{
	hardware.PrecisionBF16: 746.0 / 989,
	hardware.PrecisionFP16: 721.0 / 989,
	hardware.PrecisionFP8:  1406.0 / 1979,
	hardware.PrecisionTF32: 382.0 / 494,
}

// architectureGEMMScale carries the default GEMM efficiency, measured on
// a Hopper GPU, to other architectures by compute capability: a published
// table of the largest matmul throughput each GPU reaches puts the A100
// SXM at 267.9 of 312 TFLOP/s bf16 (85.9%) and the H100 SXM at 792.1 of
// 989 (80.1%), so an Ampere GPU reaches a larger share of its lower peak.
// Other architectures keep the Hopper share.
var architectureGEMMScale = map[string]float64{
	"8.0": (267.9 / 312) / (792.1 / 989),
}

// rate is achieved FLOP/s of matrix products at a precision.
func (j *job) rate(prec string) float64 {
	gpu := j.in.Hardware.GPU
	eff, ok := j.in.Calibration.GEMM(prec)
	if ok {
		j.calibrate["gemm_efficiency."+prec] = true
	} else {
		eff = defaultGEMMEfficiency[prec]
		if scale, ok := architectureGEMMScale[gpu.ComputeCapability]; ok {
			eff *= scale
		}
	}
	return gpu.TFLOPS[prec] * 1e12 * eff
}

// stepParts are one step's times on the most loaded GPU.
type stepParts struct {
	microCompute        float64 // one micro-batch's forward and backward
	tp, pp, cp          float64 // per micro-batch
	tpExposed           float64 // per micro-batch
	cpExposed           float64 // per micro-batch
	dp, dpExposed       float64 // per step, ZeRO-0..2
	shardedPerMicro     float64 // ZeRO-3/FSDP gathers and scatters
	shardedExposedMicro float64
	optimizer           float64
}

// time fills the step time and everything derived from it.
func (j *job) time(e *Estimate) {
	p := j.parts()
	l := j.l
	m := float64(j.micro)
	vp := float64(layout.VirtualStages(l))
	gpu := p.microCompute + p.tpExposed + p.pp + p.cpExposed + p.shardedExposedMicro
	micro := j.microTime(gpu, j.hostTime())
	bubble := float64(l.PP-1) / vp
	// The stage with the most layers sets the pace of the steady state;
	// the fill and drain pass through every stage, the average one's time
	// each.
	if j.slotLayers == j.layers {
		e.StepTimeS = micro*(m+bubble) + p.dpExposed + p.optimizer
		e.HostWaitS = (micro - gpu) * (m + bubble)
	} else {
		p = j.slowestStage(p)
		slotGPU := p.microCompute + p.tpExposed + p.pp + p.cpExposed + p.shardedExposedMicro
		slot := j.microTime(slotGPU, j.hostTime()*j.slotLayers/j.layers)
		e.StepTimeS = slot*m + micro*bubble + p.dpExposed + p.optimizer
		e.HostWaitS = (slot-slotGPU)*m + (micro-gpu)*bubble
	}
	if j.hostAhead() {
		gpuStep := gpu*m + p.optimizer
		e.StepTimeS = max(gpuStep, m*j.hostTime()+j.fw.HostSPerStepAlone)
		e.HostWaitS = e.StepTimeS - gpuStep
	}
	e.ComputeS = p.microCompute * m
	e.OptimizerS = p.optimizer
	e.BubbleFraction = float64(l.PP-1) / (vp * m)
	e.CommS = Comm{TP: p.tp * m, PP: p.pp * m, CP: p.cp * m, DP: p.dp + p.shardedPerMicro*m}
	e.ExposedCommS = Comm{TP: p.tpExposed * m, PP: p.pp * m, CP: p.cpExposed * m, DP: p.dpExposed + p.shardedExposedMicro*m}
	tokensPerStep := float64(l.GlobalBatch) * float64(j.in.Model.SeqLen)
	e.TokensPerS = tokensPerStep / e.StepTimeS
	e.TokensPerSPerGPU = e.TokensPerS / float64(l.WorldSize())
	peak := j.in.Hardware.GPU.TFLOPS[precision(l)] * 1e12
	e.MFU = e.TokensPerS * j.flops.model / (float64(l.WorldSize()) * peak)
	e.ModelTFLOPSPerGPU = e.TokensPerSPerGPU * j.flops.model / 1e12
	e.HardwareTFLOPSPerGPU = e.TokensPerSPerGPU * j.flops.executed / 1e12
}

// slowestStage is p for the pipeline stage with the most layers, where
// the layout gives the first or last stage its own count: its per-layer
// communication by the ratio of its layers to the average stage's, and
// its compute by that ratio on the layers' share of the work (the
// embedding's and output layer's products stay spread over the stages,
// as they are with an even split).
func (j *job) slowestStage(p stepParts) stepParts {
	r := j.slotLayers / j.layers
	p.microCompute *= 1 + j.layerShare()*(r-1)
	p.tp *= r
	p.tpExposed *= r
	p.cp *= r
	p.cpExposed *= r
	p.shardedPerMicro *= r
	p.shardedExposedMicro *= r
	return p
}

// layerShare is the transformer layers' share of the step's executed
// FLOPs: what is left once the products outside them (output layer,
// embeddings not read by index) are taken out.
func (j *job) layerShare() float64 {
	outside := j.params - j.counts.PerLayer*float64(j.in.Model.Layers) - j.lookups()
	perParam := 6.0
	if j.adapters > 0 {
		perParam = 4 // frozen weights need no weight gradient
	}
	return max(0, 1-perParam*outside/j.flops.executed)
}

func (j *job) parts() stepParts {
	var p stepParts
	p.microCompute = j.microCompute()
	j.tensorParallel(&p)
	j.contextParallel(&p)
	j.pipelineParallel(&p)
	j.dataParallel(&p)
	j.optimizerStep(&p)
	return p
}

// hostTime is the CPU time to launch one micro-batch's layers on this
// GPU; the GPU cannot finish them sooner.
func (j *job) hostTime() float64 {
	perLayer := j.fw.HostSPerLayer
	if j.hostAhead() {
		perLayer = j.fw.HostSPerLayerAlone
	}
	if j.l.TP > 1 {
		// Only the forward's and backward's own collectives: the
		// recomputed forward's added no measurable wait (UF against U).
		calls := 4.0
		if j.l.SequenceParallel {
			calls = 8
		}
		perLayer += calls * expectedMax(j.l.TP) * j.fw.HostSPerTPCollectiveSpread
	}
	return j.layers * perLayer
}

// hostAhead: one GPU alone without FSDP2, where the host runs ahead of
// the GPU through the whole step (Framework.HostSPerLayerAlone).
func (j *job) hostAhead() bool { return j.alone() && j.fw.HostSPerLayerAlone > 0 }

// expectedMax is the expected largest of n standard normal draws (Blom's
// approximation: 0.589 at n = 2 against the exact 0.564, within 2% of the
// exact order statistic from n = 4):
// how far, in spreads of one rank's host time, the last of n ranks
// arrives after their mean. Every rank waits for it at each collective.
func expectedMax(n int) float64 {
	if n < 2 {
		return 0
	}
	p := (float64(n) - 0.375) / (float64(n) + 0.25)
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// microTime is one micro-batch's time from its GPU and host times.
func (j *job) microTime(gpu, host float64) float64 {
	p := j.fw.CouplingExponent
	if p == 0 || (j.l.TP == 1 && j.l.PP == 1) {
		return max(gpu, host)
	}
	return math.Pow(math.Pow(gpu, p)+math.Pow(host, p), 1/p)
}

// tokensPerGPU is one micro-batch's tokens divided over the GPUs that
// share its work (TP, CP and the pipeline stages).
func (j *job) tokensPerGPU() float64 {
	l := j.l
	return float64(l.MicroBatch*j.in.Model.SeqLen) / float64(l.TP*l.CP*l.PP)
}

// microCompute is matrix products at the layout's precision (under fp8,
// gpuflow's trainer keeps the output layer's and LoRA adapters' at bf16:
// fp8KeptAtBF16), attention at its own rates (attentionTime), the
// non-matrix work around the linear
// layers, which scales with a full training pass at bf16 whatever the
// precision (under LoRA, with the pass executed where the framework's
// LoRA saves that work too; a recomputed forward outside it under
// Framework.RecomputeOutsideRemainder), and what fp8's scaling and
// LoRA's adapters move through memory.
func (j *job) microCompute() float64 {
	bf16 := j.rate(hardware.PrecisionBF16)
	prec := j.rate(precision(j.l))
	kept := j.fp8KeptAtBF16()
	linear := (j.flops.executed-j.flops.attention-kept)/prec + kept/bf16
	attention := j.attentionTime()
	pass := j.flops.fullEquivalent
	if j.fw.FrozenGradsFree {
		pass = j.flops.executed
	}
	passAttention := j.flops.attention
	if j.fw.RecomputeOutsideRemainder {
		pass -= j.flops.recomputed
		passAttention -= j.flops.recomputedAttention
	}
	rest := (pass - passAttention) / bf16 * (1/j.fw.GEMMShare - 1)
	return j.tokensPerGPU()*(linear+attention+rest) + j.gemmOverhead(prec) + j.scoresTime() + j.elementwiseTime() + j.trainerElementwiseTime() + j.eagerElementwiseTime() + j.adapterTraffic() +
		j.fp8Traffic() + j.gradAccumulationTime()
}

// attentionTime is the attention core's time per token: forward and
// backward at attentionRate, a recomputed forward at attentionForwardRate.
func (j *job) attentionTime() float64 {
	f := j.flops
	return (f.attention-f.recomputedAttention)/j.attentionRate() + f.recomputedAttention/j.attentionForwardRate()
}

// fp8KeptAtBF16 is the FLOPs per token of the products that stay at bf16
// under precision "fp8": gpuflow's output layer (6 V h, or 4 V h under
// LoRA, whose frozen output layer has no weight-gradient product) and,
// over an fp8 frozen base, the LoRA adapters' products.
func (j *job) fp8KeptAtBF16() float64 {
	if precision(j.l) != hardware.PrecisionFP8 {
		return 0
	}
	var kept float64
	if j.fw.FP8HeadBF16 {
		s := j.in.Model
		passes := 6.0
		if j.in.LoRA != nil {
			passes = 4
		}
		kept = passes * float64(s.Vocab) * float64(s.Hidden)
	}
	if j.frozenFP8() {
		kept += j.flops.adapters
	}
	return kept
}

// frozenFP8 is LoRA over an fp8 frozen base (Framework.FP8FrozenBase).
func (j *job) frozenFP8() bool {
	return j.fw.FP8FrozenBase && j.in.LoRA != nil && precision(j.l) == hardware.PrecisionFP8
}

// Bytes moved per activation element by Megatron-LM's element-wise
// kernels around a GPT layer's products (bf16 or fp16 activations),
// forward and backward, and what a fully recomputed forward adds.
//
// Per hidden element where tensor parallelism replicates the work
// (sequence parallelism splits it): two layer norms read their input and
// write their output (4 each) and two fused bias-dropout-adds read the
// branch and the residual and write the sum and a one-byte mask (7 each),
// 22 forward; backward, each layer norm reads its input and output
// gradient and writes the input gradient (6), each dropout-add reads the
// gradient and the mask, writes the branch gradient and adds the
// residual's (11), 34.
//
// Per hidden element on the TP shard: attention's context copied into
// the [sequence, batch, hidden] layout the output product reads (4), and
// back in the backward (4).
//
// Per FFN element on the shard: GELU with its bias fused reads and
// writes (4), its backward reads the gradient and the input and writes
// (6); SwiGLU reads gate and up and writes their product (6), its
// backward reads the gradient, gate and up and writes two gradients (10).
const (
	replicatedBytes, replicatedRecomputeBytes = 56, 22
	shardBytes, shardRecomputeBytes           = 8, 4
	geluBytes, geluRecomputeBytes             = 10, 4
	swigluBytes, swigluRecomputeBytes         = 16, 6
)

// elementwiseTime is one micro-batch's element-wise kernels on this GPU at
// achieved HBM bandwidth, for a framework that counts them
// (Framework.ElementwiseCounted). Their cost per token grows with the
// hidden size where the products' grows with its square, so they weigh
// on narrow layers and on TP without sequence parallelism, where every
// rank runs the norms and dropouts over the whole hidden width.
func (j *job) elementwiseTime() float64 {
	hbm := j.hbm()
	if !j.fw.ElementwiseCounted || hbm <= 0 {
		return 0
	}
	l, s := j.l, j.in.Model
	full := l.Recompute == layout.RecomputeFull
	replicated := withRecompute(replicatedBytes, replicatedRecomputeBytes, full)
	shard := withRecompute(shardBytes, shardRecomputeBytes, full)
	ffn := withRecompute(geluBytes, geluRecomputeBytes, full)
	if s.Activation == model.ActivationSwiGLU {
		ffn = withRecompute(swigluBytes, swigluRecomputeBytes, full)
	}
	width := float64(l.TP)
	if l.SequenceParallel {
		width = 1
	}
	h, f := float64(s.Hidden), float64(s.FFNHidden)
	perToken := (replicated*width+shard)*h + ffn*f
	return j.tokensPerGPU() * float64(s.Layers) * perToken / hbm
}

// withRecompute is a kernel group's bytes, its forward again when the
// layer is fully recomputed.
func withRecompute(bytes, recompute float64, full bool) float64 {
	if full {
		return bytes + recompute
	}
	return bytes
}

// Bytes moved per element by dynamic per-tensor fp8 scaling, outside the
// products: the forward reads its input (and weight) once for the
// maximum, again to cast, and writes the 1-byte copy (5); the backward
// does the same for the output gradient and writes its transpose too
// (7), and transposes the saved fp8 input and weight (2): fp8's products
// on Hopper take their second operand column-major only.
//
// Over a frozen base (LoRA) nothing is transposed for a weight gradient:
// the output gradient's cast is its maximum and cast alone (5), and the
// backward casts each weight again under the forward's scale, reading the
// bf16 weight and writing its 1-byte copy (3), then transposes that copy
// (2), instead of holding the forward's copy until the backward.
const (
	fp8ForwardBytes        = 5
	fp8GradientBytes       = 7
	fp8TransposeByte       = 2
	fp8FrozenGradientBytes = 5
	fp8RecastBytes         = 3
)

// fp8Traffic is what dynamic fp8 scaling adds to one micro-batch on this
// GPU at achieved HBM bandwidth: per token, every product's input and
// output-gradient width; per micro-batch, every layer weight. A fully
// recomputed forward casts again. The gathered weights and the traffic
// are divided as the products are (tokensPerGPU and the stage's share),
// but for the column-parallel inputs, cast whole on every TP rank.
func (j *job) fp8Traffic() float64 {
	hbm := j.hbm()
	if !j.fw.FP8DynamicScaling || precision(j.l) != hardware.PrecisionFP8 || hbm <= 0 {
		return 0
	}
	forward := float64(fp8ForwardBytes)
	if j.l.Recompute == layout.RecomputeFull {
		forward *= 2
	}
	in, out := productWidths(j.in.Model)
	// Under TP every rank casts the column-parallel layers' whole input.
	in += float64(j.l.TP-1) * columnInputWidth(j.in.Model)
	input, gradient, weight := forward+fp8TransposeByte, float64(fp8GradientBytes), forward+fp8TransposeByte
	if j.frozenFP8() {
		input, gradient, weight = forward, fp8FrozenGradientBytes, forward+fp8RecastBytes+fp8TransposeByte
	}
	layers := float64(j.in.Model.Layers)
	tokens := j.tokensPerGPU() * layers * (in*input + out*gradient)
	weights := j.counts.PerLayer * layers / float64(j.l.TP*j.l.PP) * weight
	return (tokens + weights) / hbm
}

// columnInputWidth sums the inputs of one layer's column-parallel
// products (q, k, v; gate and up, or up), which every tensor-parallel rank
// takes whole.
func columnInputWidth(s model.Shape) float64 {
	h := float64(s.Hidden)
	if s.Activation == model.ActivationSwiGLU {
		return 5 * h
	}
	return 4 * h
}

// productWidths sums the input and the output widths of one layer's
// linear products: q, k, v and o; gate, up and down (SwiGLU) or up and
// down.
func productWidths(s model.Shape) (in, out float64) {
	h, f := float64(s.Hidden), float64(s.FFNHidden)
	q, kv := float64(s.Heads*s.HeadDim()), float64(s.KVHeads*s.HeadDim())
	in, out = 3*h+q, q+2*kv+h
	if s.Activation == model.ActivationSwiGLU {
		return in + 2*h + f, out + 2*f + h
	}
	return in + h + f, out + f + h
}

// gradAccumulationTime is the separate pass that adds one micro-batch's
// weight gradients into the accumulated ones when the framework does not
// fuse it into the weight-gradient product: it reads the new gradient
// (the training type, the weights' width) and reads and writes the
// accumulated one, for every parameter this GPU trains, at achieved HBM
// bandwidth. Megatron-LM's hook ran it for every micro-batch, the first
// included (the main gradients start from zero).
func (j *job) gradAccumulationTime() float64 {
	hbm := j.hbm()
	if !j.fw.SeparateGradAccumulation || hbm <= 0 {
		return 0
	}
	trained := j.stageP
	if j.in.LoRA != nil {
		trained = j.stageA
	}
	return trained * (j.fw.WeightBytes + 2*j.fw.GradBytes) / hbm
}

// gemmOverheadFLOPs is the fixed cost of one matrix product in FLOPs at
// the full rate: the time a GEMM takes is (flops + overhead) / rate, so
// its efficiency falls as flops / (flops + overhead) for small shapes.
// Fitted (least squares on log time) to the benchmark plugin's square bf16
// sweep on one H100, 1,024 to 16,384: 820 TFLOP/s and 4.9 us per product
// (docs/estimator.md, "GEMM efficiency by shape"). It is the fill and
// drain of a wave of tiles, counted in FLOPs so that it carries to GPUs
// of a similar SM count: on an H200's layer-shaped products it predicts
// as well as the H200's own fit (TestGEMMOverheadFit).
const gemmOverheadFLOPs = 820e12 * 4.9e-6

// gemmReferenceFLOPs is the 8192^3 product the GEMM efficiency (default
// or calibrated) was measured at; its own overhead is taken out of the
// rate so that large products keep their measured speed.
const gemmReferenceFLOPs = 2 * 8192.0 * 8192 * 8192

// gemmOverhead is the fixed cost of one micro-batch's matrix products on
// this GPU: the framework's products per layer, three times (forward,
// input gradient, weight gradient) and once more when the layer is
// recomputed. The rate is the reference product's, so the reference's own
// overhead is subtracted.
func (j *job) gemmOverhead(rate float64) float64 {
	if j.fw.GEMMsPerLayer == 0 {
		return 0
	}
	passes := 3.0
	if j.l.Recompute == layout.RecomputeFull {
		passes = 4
	}
	launches := j.layers * j.fw.GEMMsPerLayer * passes
	perGEMM := j.tokensPerGPU() * (j.flops.executed - j.flops.attention) / launches
	return launches * (gemmOverheadFLOPs - perGEMM*gemmOverheadFLOPs/gemmReferenceFLOPs) / rate
}

// Bytes moved per attention score element by materialised attention,
// outside the matrix products: the fused scale-mask-softmax reads and
// writes fp16/bf16 scores (4), dropout reads them and writes them and a
// one-byte mask (5); backward, dropout's gradient reads the gradient and
// the mask and writes (5), softmax's reads the gradient and its output
// and writes (6). A recomputed forward pays the forward's 9 again.
const (
	scoreBytesForward  = 9
	scoreBytesBackward = 11
)

// scoresTime is what materialised attention adds to one micro-batch on
// this GPU: the element-wise kernels over the b * a/tp * s^2 scores of
// every layer at achieved HBM bandwidth, and the batched products'
// traffic (each writes or reads the scores once, 2 bytes an element,
// against 2 * head_dim FLOPs). The products that write an s x s result
// (Q K^T forward and recomputed, and the backward's dP = dO V^T) have
// only the head size as inner dimension: each output tile's arithmetic
// is a few steps of the main loop, and writing the tile out is not hidden
// behind it, so they pay their write in full on top of their FLOPs. The
// products that read the scores (P V forward and recomputed, and the
// backward's dV, dQ and dK) run the sequence as inner dimension and
// stream the scores while they compute, paying only the excess.
func (j *job) scoresTime() float64 {
	hbm := j.hbm()
	if !j.fw.materialized() || hbm <= 0 {
		return 0
	}
	l, s := j.l, j.in.Model
	seq := float64(s.SeqLen)
	elements := float64(l.MicroBatch) * float64(s.Heads) / float64(l.TP) * seq / float64(l.CP) * seq * j.layers
	bytes, writers, readers := float64(scoreBytesForward+scoreBytesBackward), 2.0, 4.0
	if l.Recompute != layout.RecomputeNone {
		bytes += scoreBytesForward
		writers++
		readers++
	}
	perReader := max(0, 2/hbm-2*float64(s.HeadDim())/j.rate(hardware.PrecisionBF16))
	return elements * (bytes/hbm + writers*2/hbm + readers*perReader)
}

// loraBytesPerWidth is the memory traffic per token of one LoRA adapter
// per unit of its input plus output width: dropout, scaling and the
// residual add of a Hugging Face PEFT LoRA layer, forward and backward,
// about 21 bytes per input and 18 per output element in bf16. The two
// rank-r products themselves are negligible FLOPs but bandwidth-bound.
const loraBytesPerWidth = 20

// adapterTraffic is one micro-batch's LoRA element-wise work on one GPU
// at achieved HBM bandwidth.
func (j *job) adapterTraffic() float64 {
	hbm := j.hbm()
	if j.adapterWidth == 0 || hbm <= 0 {
		return 0
	}
	bytes := j.tokensPerGPU() * float64(j.in.Model.Layers) * j.adapterWidth * loraBytesPerWidth
	return bytes / hbm
}

func (j *job) group(kind string) layout.Group {
	g, _ := j.place.Group(kind)
	return g
}

// tensorParallel: every layer all-reduces (or, with sequence parallelism,
// all-gathers and reduce-scatters the same bytes) its activations twice
// in forward and twice in backward, twice more when fully recomputed.
// Under gpuflow's fp8 with sequence parallelism the all-gathers carry
// fp8 (the attention's and MLP's inputs in e4m3, the row-parallel
// layers' output gradients in e5m2), half the bytes, while the
// reduce-scatters stay in bf16 (under LoRA over an fp8 base, DTensor
// gathers the inputs in bf16); and every split tensor's scale comes from
// an all-reduced maximum, one number each.
// With the asynchronous all-reduce, the backward's two collectives of the
// column-parallel layers' input gradients run beside those layers'
// weight-gradient products and only their excess is exposed.
func (j *job) tensorParallel(p *stepParts) {
	l, s := j.l, j.in.Model
	if l.TP == 1 {
		return
	}
	k := j.links.forGroup(j.group(layout.KindTP))
	bytes := float64(s.SeqLen/l.CP*l.MicroBatch*s.Hidden) * 2
	pair := k.allReduce(bytes, l.TP)
	if j.fp8Split() && l.SequenceParallel && !j.frozenFP8() {
		pair = k.gatherOrScatter(bytes/2, l.TP) + k.gatherOrScatter(bytes, l.TP)
	}
	p.tp = j.layers * (j.tpAllReducesPerLayer()*pair + j.fp8ScaleReductions()*k.allReduce(4, l.TP))
	p.tpExposed = p.tp - j.layers*j.tpHiddenPerLayer(k.inputGradReduce(bytes, l.TP, l.SequenceParallel))
}

// fp8Split is gpuflow's fp8 (dynamic per-tensor scales) on split weights.
func (j *job) fp8Split() bool {
	return j.fw.FP8DynamicScaling && precision(j.l) == hardware.PrecisionFP8 && j.l.TP > 1
}

// fp8ScaleReductions counts a layer's all-reduced maxima per micro-batch
// under tensor parallelism: the forward's five column-parallel weights
// (q, k, v, gate, up), the two row-parallel layers' inputs and weights
// and, with sequence parallelism, the two gathered inputs; the backward's
// five column-parallel output gradients and, with sequence parallelism,
// the two row-parallel ones it gathers. A full recomputation reduces the
// forward's again. Over a frozen base (LoRA) sequence parallelism adds
// none: the inputs are gathered in bf16 and the row-parallel layers'
// output gradients come whole.
func (j *job) fp8ScaleReductions() float64 {
	if !j.fp8Split() {
		return 0
	}
	forward, backward := 9.0, 5.0
	if j.l.SequenceParallel && !j.frozenFP8() {
		forward, backward = 11, 7
	}
	if j.l.Recompute == layout.RecomputeFull {
		forward *= 2
	}
	return forward + backward
}

// tpHiddenPerLayer is the part of one layer's input-gradient collectives
// (each taking comm) that the weight-gradient products hide. The two
// column-parallel products, q, k and v fused and the MLP's first (gate
// and up fused under SwiGLU), each launch their input gradient's
// collective and then compute their weight gradient, 2 x tokens x
// hidden x out/tp FLOPs at the layout's precision, before waiting on it:
// each hides at most its own collective. Under LoRA the frozen weights
// have no weight-gradient product and the collective is waited on at
// once.
func (j *job) tpHiddenPerLayer(comm float64) float64 {
	if !j.fw.AsyncTPAllReduce || j.in.LoRA != nil {
		return 0
	}
	l, s := j.l, j.in.Model
	tokens := float64(s.SeqLen / l.CP * l.MicroBatch)
	qkv := float64(s.Heads*s.HeadDim() + 2*s.KVHeads*s.HeadDim())
	up := float64(s.FFNHidden)
	if s.Activation == model.ActivationSwiGLU {
		up *= 2
	}
	rate := j.rate(precision(l))
	var hidden float64
	for _, out := range []float64{qkv, up} {
		wgrad := 2 * tokens * float64(s.Hidden) * out / float64(l.TP) / rate
		hidden += min(comm, wgrad)
	}
	return hidden
}

// tpAllReducesPerLayer counts a layer's activation all-reduces (or their
// bytes' worth of all-gathers and reduce-scatters) per micro-batch.
func (j *job) tpAllReducesPerLayer() float64 {
	if j.l.Recompute == layout.RecomputeFull {
		return 6
	}
	return 4
}

// contextParallel: ring attention with the load-balanced split (PyTorch's
// context parallel attention, Megatron's point-to-point ring). The
// sequence is cut into 2*cp chunks and rank r holds chunks r and
// 2cp-1-r, so each of the ring's cp steps does the same causal share of
// the rank's attention, 1/cp of it. The forward passes each layer's K and
// V chunk to the next rank cp-1 times, each hop in flight while the
// current step computes. The backward passes K and V cp-1 times again and
// the K and V gradients cp times: accumulated in fp32, they travel with
// their chunk and the last hop brings them home after the last step, with
// nothing left to hide behind. A full recomputation runs the forward's
// ring again.
func (j *job) contextParallel(p *stepParts) {
	l, s := j.l, j.in.Model
	if l.CP == 1 {
		return
	}
	k := j.links.forGroup(j.group(layout.KindCP))
	elements := 2 * float64(s.SeqLen/l.CP*l.MicroBatch) * float64(s.KVHeads*s.HeadDim()) / float64(l.TP)
	kv, grads := k.sendRecv(elements*2), k.sendRecv(elements*4)
	forward := j.attentionForwardPerLayer() / float64(l.CP)
	r := ring{steps: l.CP, hop: kv}
	total, exposed := r.forward(forward)
	bt, be := r.backward(2*forward, grads)
	total, exposed = total+bt, exposed+be
	if l.Recompute == layout.RecomputeFull {
		rt, re := r.forward(forward)
		total, exposed = total+rt, exposed+re
	}
	p.cp = j.layers * total
	p.cpExposed = j.layers * exposed
}

// attentionForwardPerLayer is one layer's attention forward on this GPU
// for one micro-batch: a third of the attention core's FLOPs (flops.go),
// over its share of the tokens.
func (j *job) attentionForwardPerLayer() float64 {
	l, s := j.l, j.in.Model
	tokens := float64(l.MicroBatch*s.SeqLen) / float64(l.TP*l.CP)
	return tokens * 4 * float64(s.Heads*s.HeadDim()) * float64(s.SeqLen) / j.rate(hardware.PrecisionBF16)
}

// ring is one layer's ring of cp steps; hop is one K and V transfer.
type ring struct {
	steps int
	hop   float64
}

// forward: step i computes while the chunk for step i+1 arrives.
func (r ring) forward(step float64) (total, exposed float64) {
	for i := 0; i < r.steps-1; i++ {
		total += r.hop
		exposed += max(0, r.hop-step)
	}
	return total, exposed
}

// backward: step i computes while the chunk for step i+1 arrives and the
// gradients of step i-1 go on to the next rank; the last step's
// gradients go home after it.
func (r ring) backward(step, grads float64) (total, exposed float64) {
	for i := 0; i < r.steps; i++ {
		var flight float64
		if i < r.steps-1 {
			flight += r.hop
		}
		if i > 0 {
			flight += grads
		}
		total += flight
		exposed += max(0, flight-step)
	}
	return total + grads, exposed + grads
}

// pipelineParallel: each model chunk sends its output forward and
// receives a gradient back, per micro-batch; sequence parallelism, or
// the framework's scatter/gather, sends a 1/tp slice per TP rank, except
// the gradients of a framework that sends them whole, and a framework
// that keeps only the slice of what it sent gathers it again before the
// backward.
func (j *job) pipelineParallel(p *stepParts) {
	l, s := j.l, j.in.Model
	if l.PP == 1 {
		return
	}
	bytes := float64(s.SeqLen/l.CP*l.MicroBatch*s.Hidden) * 2
	chunks := float64(layout.VirtualStages(l))
	sp := l.SequenceParallel && l.TP > 1
	scatter := l.TP > 1 && j.fw.ScatterGather && !sp
	k := j.links.forGroup(j.group(layout.KindPP))
	whole := k.sendRecv(bytes)
	if !sp && !scatter {
		p.pp = 2 * chunks * whole
		return
	}
	split := k.sendRecv(bytes / float64(l.TP))
	var regather float64
	if scatter {
		// Each TP rank sends its 1/tp slice; the receiving stage
		// all-gathers the whole activation over its TP group.
		gather := j.links.forGroup(j.group(layout.KindTP)).gatherOrScatter(bytes, l.TP)
		split += gather
		if j.fw.RegathersOutput {
			regather = gather
		}
	}
	backward := split
	if scatter && j.fw.GradSendsWhole {
		backward = whole
	}
	p.pp = chunks * (split + backward + regather)
}

// dataLink is the link of the data-parallel group (DP times CP): the
// slower of the two kinds' links.
func (j *job) dataLink() (link, int) {
	dp, cp := j.group(layout.KindDP), j.group(layout.KindCP)
	g := dp
	if cp.Size > 1 && (dp.Size == 1 || linkRank(cp.Link) > linkRank(dp.Link)) {
		g = cp
	}
	g.Size = j.dataShards()
	g.NodesSpanned = max(1, dp.NodesSpanned*cp.NodesSpanned)
	return j.links.forGroup(g), g.Size
}

func linkRank(l string) int {
	return map[string]int{layout.LinkNVLink: 1, layout.LinkPCIe: 2, layout.LinkNetwork: 3}[l]
}

// dataParallel: ZeRO-0 all-reduces gradients once per step; ZeRO-1/2
// reduce-scatter them and all-gather the updated weights; ZeRO-3 and
// FSDP gather weights for forward and backward and reduce-scatter
// gradients for every micro-batch. Overlap hides the gradient reduction
// behind one micro-batch's backward and the gather behind its forward.
func (j *job) dataParallel(p *stepParts) {
	k, n := j.dataLink()
	if n == 1 {
		return
	}
	trained, weights := j.stageP, j.stageP
	if j.in.LoRA != nil {
		trained, weights = j.stageA, j.stageP+j.stageA
	}
	grads := trained * j.fw.GradCommBytes
	if j.fw.FSDP2 {
		j.fsdp2DataParallel(p, k, n, weights, grads)
		return
	}
	fwd, bwd := j.passes(p.microCompute)
	exposed := j.exposed
	switch j.l.ShardingStage() {
	case 0:
		p.dp = k.allReduce(grads, n)
		p.dpExposed = exposed(p.dp, bwd)
	case 1, 2:
		rs := k.gatherOrScatter(grads, n)
		ag := k.gatherOrScatter(trained*j.fw.ParamCommBytes, n)
		p.dp = rs + ag
		p.dpExposed = exposed(rs, bwd) + exposed(ag, fwd)
	default:
		p.shardedPerMicro = 2*k.gatherOrScatter(weights*j.fw.ParamCommBytes, n) + k.gatherOrScatter(grads, n)
		p.shardedExposedMicro = exposed(p.shardedPerMicro, p.microCompute)
	}
}

// passes splits a micro-batch's compute into forward and backward: the
// forward is the same layout's without recomputation (forwardCompute),
// and the backward the rest, a recomputed forward included.
func (j *job) passes(micro float64) (fwd, bwd float64) {
	fwd = j.forwardShare(micro) * micro
	return fwd, micro - fwd
}

// forwardShare is the forward's share of a micro-batch's compute time
// micro.
func (j *job) forwardShare(micro float64) float64 {
	if micro <= 0 {
		return j.flops.forward / j.flops.executed
	}
	return min(1, j.notRecomputed().forwardCompute()/micro)
}

// forwardCompute is a micro-batch's forward time on this GPU: the
// attention core's forward at its own rate (attentionForwardRate), the
// rest of the micro-batch by the forward's share of the other FLOPs.
// Without recomputation (notRecomputed), every other kind of work splits
// between forward and backward as the FLOPs do.
func (j *job) forwardCompute() float64 {
	f := j.flops
	micro := j.microCompute()
	if f.executed <= f.attention {
		return f.forward / f.executed * micro
	}
	attention := j.tokensPerGPU() * j.attentionTime()
	forwardAttention := j.tokensPerGPU() * f.attentionForward / j.attentionForwardRate()
	return (f.forward-f.attentionForward)/(f.executed-f.attention)*max(0, micro-attention) + forwardAttention
}

// notRecomputed is this job with no layer recomputed: a forward pass (of
// training, a validation or forward-only work) runs the same whatever
// the backward recomputes.
func (j *job) notRecomputed() *job {
	if j.l.Recompute == layout.RecomputeNone {
		return j
	}
	c := *j
	c.l.Recompute = layout.RecomputeNone
	c.in.Layout.Recompute = layout.RecomputeNone
	c.flops = c.countFLOPs(c.lookups())
	return &c
}

// exposed is the part of a data-parallel transfer that the compute
// window it overlaps does not hide.
func (j *job) exposed(comm, window float64) float64 {
	if !j.fw.OverlapDP {
		return comm
	}
	return max(0, comm-window)
}

// fsdp2DataParallel: FSDP2 reduces gradients after every micro-batch's
// backward, by all-reduce when the weights are replicated (ZeRO 0) and
// by reduce-scatter otherwise; it gathers the weights once per
// micro-batch at stages 1 and 2, which keep them for the backward, and
// twice at stage 3.
func (j *job) fsdp2DataParallel(p *stepParts, k link, n int, weights, grads float64) {
	fwd, bwd := j.passes(p.microCompute)
	exposed := j.exposed
	gather := k.gatherOrScatter(weights*j.fw.ParamCommBytes, n)
	switch j.l.ShardingStage() {
	case 0:
		reduce := k.allReduce(grads, n)
		p.shardedPerMicro, p.shardedExposedMicro = reduce, exposed(reduce, bwd)
	case 1, 2:
		reduce := k.gatherOrScatter(grads, n)
		p.shardedPerMicro = gather + reduce
		p.shardedExposedMicro = exposed(gather, fwd) + exposed(reduce, bwd)
	default:
		p.shardedPerMicro = 2*gather + k.gatherOrScatter(grads, n)
		p.shardedExposedMicro = exposed(p.shardedPerMicro, p.microCompute)
	}
}

// optimizerStep is memory-bound: the framework's per-step bytes for each
// parameter this GPU updates, at achieved HBM bandwidth.
func (j *job) optimizerStep(p *stepParts) {
	trained := j.stageP
	if j.in.LoRA != nil {
		trained = j.stageA
	}
	if j.l.ShardingStage() >= 1 {
		trained /= float64(j.dataShards())
	}
	hbm := j.hbm()
	if hbm <= 0 {
		return
	}
	bytes := j.fw.StepBytesPerParam
	if j.alone() && j.fw.StepBytesAlone > 0 && !j.in.FusedAdamWAlone {
		bytes = j.fw.StepBytesAlone
	}
	p.optimizer = trained * bytes / hbm
}

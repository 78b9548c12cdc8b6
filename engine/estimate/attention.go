package estimate

import (
	"github.com/gpuflow/gpuflow/hardware"
)

// A fused (flash) attention kernel does not run at the rate of a large
// matrix product, and its rate depends on the head size and on how many
// keys each query reads. Three mechanisms, each a constant below, measured
// on an H200 (cuDNN's kernels through PyTorch's scaled_dot_product_attention,
// causal, bf16, forward and backward, head sizes 64, 96 and 128 and 1,024
// to 16,384 keys: scripts/device/attn_sweep.py, docs/estimator.md):
//
//   - its products run at a share of the GPU's bf16 peak over the causal
//     half of the score square they compute;
//   - the softmax between them (an exponential and a rescale per score,
//     forward and again in the backward) does not shrink with the head
//     size, and costs what attentionSoftmaxWidth more columns of head
//     would;
//   - each block of queries loads its queries, writes its output and
//     statistics, and in the backward its query gradient, whatever the
//     number of keys: that costs what attentionBlockKeys more keys would.
//
// Time per token, layer and head is therefore proportional to
// (head + attentionSoftmaxWidth) x (keys + attentionBlockKeys), and the
// rate in the plan's convention (the whole square, 12 x hidden x keys
// FLOPs per token and layer, counts.AttentionFLOPs) is
//
//	2 x attentionProductShare x peak x head/(head+width) x keys/(keys+block)
//
// The constants are the least-squares fit of the planned time, relative to
// the measured one, over the 25 measured shapes (TestAttentionRateFit holds
// them to engine/estimate/testdata/attention-h200.json);
// they apply to Hopper GPUs, the generation measured (attentionRate).
const (
	attentionProductShare = 0.6584
	attentionSoftmaxWidth = 45.6
	attentionBlockKeys    = 855
)

// The forward alone on the same curve, fitted to the same sweep's forward
// times (TestAttentionRateFit): it runs faster per FLOP than forward and
// backward together, 18-28% of their time for a third of the plan's
// FLOPs, its blocks' fixed work costing fewer keys (the backward
// recomputes the scores and writes three gradients per block). Over the
// measured head sizes (64-128) the fit trades a larger softmax width
// against a scale above one; the scale is not an achievable share of the
// peak on its own. A recomputed forward and forward-only work (eval
// stages, validations) take their attention at this rate.
const (
	attentionForwardScale        = 1.082
	attentionForwardSoftmaxWidth = 84.9
	attentionForwardBlockKeys    = 350
)

// flashAttentionRate is a fused attention kernel's FLOP/s for a head size
// and the keys each query reads, in the plan's whole-square convention,
// on a GPU of the given bf16 peak (FLOP/s).
func flashAttentionRate(peak, head, keys float64) float64 {
	return 2 * attentionProductShare * peak * head / (head + attentionSoftmaxWidth) * keys / (keys + attentionBlockKeys)
}

// flashAttentionForwardRate is flashAttentionRate for the forward alone,
// in the same whole-square convention (a third of the forward and
// backward's FLOPs).
func flashAttentionForwardRate(peak, head, keys float64) float64 {
	return 2 * attentionForwardScale * peak * head / (head + attentionForwardSoftmaxWidth) * keys / (keys + attentionForwardBlockKeys)
}

// measuredAttentionCapability is the compute capability the attention
// curve was measured on (Hopper: H100, H200, GH200).
const measuredAttentionCapability = "9.0"

// attentionRate is the rate this job's attention core runs at. cuDNN's
// fused kernels (Framework.CuDNNAttention) on the GPU generation they were
// measured on run at flashAttentionRate over the sequence's keys; a layer
// whose sliding window is shorter than the sequence runs the trainer's
// compiled flex_attention instead, not measured, at the rate of the other
// products, as do other frameworks' fused kernels, other GPU generations
// and the batched products of materialised attention (whose score traffic
// is scoresTime's). A model with both kinds of layer takes each at its own
// rate, weighted by its share of the attention work (the keys it reads).
func (j *job) attentionRate() float64 {
	return j.fusedAttentionRate(flashAttentionRate)
}

// attentionForwardRate is attentionRate for a forward alone.
func (j *job) attentionForwardRate() float64 {
	return j.fusedAttentionRate(flashAttentionForwardRate)
}

// fusedAttentionRate is the rate of this job's attention core where cuDNN's
// kernels run at curve's rate, as attentionRate describes.
func (j *job) fusedAttentionRate(curve func(peak, head, keys float64) float64) float64 {
	products := j.rate(hardware.PrecisionBF16)
	gpu := j.in.Hardware.GPU
	if j.fw.materialized() || !j.fw.CuDNNAttention || gpu.ComputeCapability != measuredAttentionCapability {
		return products
	}
	s := j.in.Model
	// Capped at the products' rate over the causal half: the forward's
	// curve, fitted on heads of 64-128, runs above it for much wider heads,
	// and no attention kernel outruns a large product.
	fused := min(curve(gpu.TFLOPS[hardware.PrecisionBF16]*1e12, float64(s.HeadDim()), float64(s.SeqLen)), 2*products)
	// The windowed layers' share of the keys read (counts.AttendedKeys).
	var windowed float64
	if s.Window > 0 && s.Window < s.SeqLen {
		windowed = float64(min(s.WindowLayers, s.Layers)*s.Window) / float64(countShape(s).AttendedKeys())
	}
	return 1 / ((1-windowed)/fused + windowed/products)
}

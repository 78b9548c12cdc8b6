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
// The constants are the least-squares fit to the 25 measured shapes
// (TestAttentionRateFit holds them to engine/estimate/testdata/attention-h200.json);
// other GPUs take the same shares of their own bf16 peak.
const (
	attentionProductShare = 0.6464
	attentionSoftmaxWidth = 43.6
	attentionBlockKeys    = 815
)

// flashAttentionRate is a fused attention kernel's FLOP/s for a head size
// and the keys each query reads, in the plan's whole-square convention,
// on a GPU of the given bf16 peak (FLOP/s).
func flashAttentionRate(peak, head, keys float64) float64 {
	return 2 * attentionProductShare * peak * head / (head + attentionSoftmaxWidth) * keys / (keys + attentionBlockKeys)
}

// attentionRate is the rate this job's attention core runs at: cuDNN's
// fused kernels (Framework.CuDNNAttention) by flashAttentionRate over the
// sequence's keys; other fused kernels, not measured here, at the rate of
// the other products. Those include the trainer's sliding windows, which
// run flex_attention's compiled kernels instead of cuDNN's, and the
// batched products of materialised attention (whose score traffic is
// scoresTime's).
func (j *job) attentionRate() float64 {
	s := j.in.Model
	windowed := s.Window > 0 && s.Window < s.SeqLen && s.WindowLayers > 0
	if j.fw.materialized() || !j.fw.CuDNNAttention || windowed {
		return j.rate(hardware.PrecisionBF16)
	}
	return flashAttentionRate(j.in.Hardware.GPU.TFLOPS[hardware.PrecisionBF16]*1e12, float64(s.HeadDim()), float64(s.SeqLen))
}

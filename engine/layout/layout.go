package layout

import "github.com/gpuflow/gpuflow/plugins/api"

// Layout is a resolved parallelism layout: api.Layout, which is also the
// value plugins receive for a stage's layout meta-argument.
type Layout = api.Layout

// Attention implementations.
const (
	// AttentionFlash is a fused kernel that never stores the s x s scores.
	AttentionFlash = "flash"
	// AttentionMaterialized computes the scores with a batched matrix
	// product, then scales, masks, softmaxes and drops them out as
	// separate memory-bound kernels over b*a*s^2 elements per layer.
	AttentionMaterialized = "materialized"
)

// Recompute choices.
const (
	RecomputeNone      = "none"
	RecomputeSelective = "selective"
	RecomputeFull      = "full"
)

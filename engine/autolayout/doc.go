// Package autolayout searches parallelism layouts for a training stage:
// every tp, cp, pp, dp, vp, micro-batch, sharding and recompute choice
// that passes layout.Validate and fits in memory, ranked by the
// estimator for throughput or cost. It returns the best layout and the
// next five, each with its estimate and why it lost.
//
// It neither places ranks nor estimates on its own; it enumerates and
// ranks what engine/layout and engine/estimate compute.
package autolayout

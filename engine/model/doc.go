// Package model describes the shape of a transformer language model (layers,
// widths, heads, vocabulary, sequence length) and holds the built-in presets
// a workload's model block can start from. Counting parameters and FLOPs is
// the estimator's job (engine/estimate), not this package's.
package model

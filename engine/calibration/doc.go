// Package calibration stores figures measured on real hardware so that
// later plans can use them instead of datasheet numbers: GEMM efficiency
// per precision, collective bus bandwidth per link kind, the activation
// memory coefficient per training framework, and whole training runs
// (tokens/s and peak memory) keyed by model and layout.
//
// A calibration file is versioned JSON (format_version), grouped by
// hardware profile name, and written atomically. This package only reads,
// writes and looks figures up; the estimator (engine/estimate) decides
// how to use them, and benchmark and training stages decide what to record.
package calibration

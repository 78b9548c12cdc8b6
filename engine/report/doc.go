// Package report turns what apply recorded (state and the run folders under
// .gpuflow/runs) into a report of each stage's latest run: figures (loss and
// throughput per step, memory per rank, bandwidth per message size, GEMM
// and HBM against the datasheet, the P2P matrix) and tables (the plan
// against the measurement, benchmark checks against their thresholds, data
// prep counts, every metric's summary).
//
// The same Report renders as one self-contained HTML page, its charts drawn
// here as SVG so the page needs no network, or as Markdown tables for a
// pull-request comment. It reads records; it runs nothing.
package report

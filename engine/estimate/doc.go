// Package estimate predicts, for one training stage, the memory on the
// most loaded GPU, the step time and its parts, throughput, MFU, and the
// time, cost and energy of the stage's token or step budget, with
// rule-named findings where a layout is likely to fail or waste hardware.
//
// The model is analytic and deterministic: parameter and FLOP counts from
// the model shape, model-state and activation memory after the ZeRO
// paper, Megatron-LM and Korthikanti et al., compute at a GEMM efficiency,
// and collectives timed on the link each parallel group really crosses.
// docs/estimator.md describes it and its measured error. Measured figures
// from engine/calibration replace the defaults where present.
//
// It does not place ranks (engine/layout does) nor search layouts
// (engine/autolayout does).
package estimate

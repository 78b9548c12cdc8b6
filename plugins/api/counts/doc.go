// Package counts counts a transformer's parameters, its LoRA adapters'
// parameters and the FLOPs per token that model FLOPs utilisation (MFU) is
// quoted in. The estimator (engine/estimate) sizes a plan with these
// counts and the train plugin hands them to the trainer, so a plan's MFU
// and a run's are computed from one formula. It depends on nothing else
// in gpuflow, so that both sides may import it.
package counts

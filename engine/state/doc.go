// Package state is gpuflow's record of what apply has done: per stage, its
// input hash, status, outputs, metrics and timings. State is versioned JSON
// under .gpuflow/, written atomically (temp file, fsync, rename) and guarded
// by an exclusive lock so two applies never interleave.
//
// It records; deciding what to run again is the engine's job.
package state

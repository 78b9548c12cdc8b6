// Package hardware is gpuflow's model of a GPU machine: the GPUs, the links
// inside a node (NVLink domains), the network between nodes, and their cost.
//
// It holds the GPU catalogue (embedded HCL files under gpus/, one
// datasheet per GPU, which a gpu block names with datasheet = "NAME") and
// the library of built-in profiles (embedded HCL files under profiles/, one
// per profile, each citing its sources), decodes the body of a workload's
// hardware block into a resolved Profile (Decode), applying a datasheet and
// overrides on top of a built-in, and gives the cty object that a
// hardware.NAME reference evaluates to (Profile.Value).
//
// It knows nothing of workloads, layouts or estimates; those live in dsl and
// engine. The gpuflow hardware list and show verbs live in cmd/gpuflow.
// The schema and the built-in table are documented in docs/hardware.md.
package hardware

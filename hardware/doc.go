// Package hardware is gpuflow's model of a GPU machine: the GPUs, the links
// inside a node (NVLink domains), the network between nodes, and their cost.
//
// It also holds the library of built-in profiles (embedded HCL files under
// profiles/) and decodes a workload's hardware block into a resolved Profile,
// applying overrides on top of a built-in profile. It knows nothing of
// workloads, layouts or estimates; those live in engine.
package hardware

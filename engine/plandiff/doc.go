// Package plandiff compares two plans of a workload and says what the
// change does to the run: which stages are added, removed or run again,
// which arguments change, how a layout change moves traffic between NVLink
// and the network, how the predicted memory, time and cost move, which
// NCCL settings change, whether the training numerics change, and whether
// the previous run's checkpoints still load.
//
// Compare is pure: it reads two *engine.Plan values and returns a Diff, a
// versioned document (FormatVersion) that the CLI renders as text, JSON or
// Markdown. Getting the plans (saved files, workloads planned now, files at
// a git ref) is the CLI's job; rendering lives there too.
package plandiff

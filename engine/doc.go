// Package engine turns a loaded workload into a plan and a plan into runs.
//
// Planning resolves the workload's hardware, models and layouts, builds the
// stage DAG from explicit depends_on and implicit references, decodes each
// stage body with the schema its plugin supplies, places layouts on the
// hardware, estimates training stages, derives each stage's NCCL
// environment, and compares every stage's inputs with the recorded state to
// choose an action: create, replace (with reasons) or no-op.
//
// Applying walks the plan's DAG in parallel, one plugin process per running
// stage, never overlapping stages that claim the same GPUs; it decodes each
// stage again once its upstream outputs are known, skips stages whose
// inputs match a succeeded run, and records state atomically after every
// stage under an exclusive lock.
//
// The engine never speaks the plugin protocol itself: it sees plugins
// through the Plugins and Launcher interfaces and plugins/api types.
package engine

// Package engine turns a loaded workload into a plan and a plan into runs.
//
// Planning resolves the workload's hardware, models and layouts, builds the
// stage DAG from explicit depends_on and implicit references, decodes each
// stage body with the schema its plugin supplies, places layouts on the
// hardware, and compares every stage's inputs with the recorded state to
// choose an action: create, replace (with reasons) or no-op.
//
// The engine never speaks the plugin protocol itself: it sees plugins
// through the Plugins interface and plugins/api types.
package engine

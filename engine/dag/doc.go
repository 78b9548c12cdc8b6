// Package dag is a directed acyclic graph of named nodes: building it,
// finding cycles (reported as a path), ordering it, and walking it in
// parallel so that a node runs only after everything it depends on.
//
// It knows nothing of stages or plugins; the engine gives nodes meaning.
package dag

// Package stats holds the summary statistics that both the engine (a
// run's report) and the plugins (a benchmark's spread across GPUs and
// ranks) quote, so that both compute them one way. It depends on nothing
// else in gpuflow, so that both sides may import it.
package stats

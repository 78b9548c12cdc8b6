// Package nodehost is what runs on each node of a cluster job: `gpuflow
// node-host`, started by srun once per node. It reads the stage request
// from the shared run directory, starts the stage's plugin on this node
// (go-plugin is local only), applies the stage, and writes the events as
// they come and the result at the end into the node's directory there
// (package rundir), where the submitting gpuflow reads them.
//
// It neither submits nor follows jobs (package slurm does) and never
// connects to another machine. When Slurm ends the job (scancel, a time
// limit) it sends SIGTERM; the node host then asks the plugin to stop, so
// that the stage still reports how far it got.
package nodehost

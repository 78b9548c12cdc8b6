// Package slurm runs a stage as a Slurm job: it renders the stage's sbatch
// script (the plan shows it; apply submits it unchanged), submits it with
// sbatch, follows the job with squeue and sacct, relays each node's events
// as they appear in the shared run directory, cancels the job with scancel
// when the stage is stopped, and turns how the job ended into the stage's
// outputs and diagnostics, submitting it again after a preemption or a
// node failure when the executor allows retries.
//
// On the nodes, srun starts one `gpuflow node-host` per node (package
// nodehost); it runs the stage's plugin there and writes what happens into
// the run directory (package rundir). Nothing here talks to a plugin
// across the network, and nothing here schedules: Slurm does.
//
// The Slurm commands run through a Runner, so that everything but the
// commands themselves is tested without a cluster.
package slurm

// Package kubernetes runs a stage as a Kubernetes Job: it renders the
// stage's manifest (an Indexed Job with one pod per node and a headless
// Service for torchrun's rendezvous, or a JobSet where the cluster serves
// that API; the plan shows it), submits it through client-go, streams the
// pods' phases as events and their container log as the stage's log,
// deletes the Job with foreground propagation when the stage is stopped,
// and turns how the pods ended (exit codes, OOMKilled, image pulls, the
// scheduler's reasons) into the stage's result. A Job recorded in state by
// an earlier gpuflow that was killed is followed, not submitted again.
//
// In the pods, `gpuflow node-host` runs the stage's plugin (package
// nodehost) and writes what happens into the stage run's directory
// (package rundir), which must be on a volume the submitting machine
// shares, as with Slurm. Nothing here schedules: the cluster's scheduler
// does.
package kubernetes

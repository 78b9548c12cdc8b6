// Package executor holds the ways gpuflow runs a stage somewhere other
// than in a plugin process on this machine; each lives in a package of
// its own below this one:
//
//   - slurm renders a stage's sbatch script, submits it, follows the job
//     and turns how it ended into the stage's result;
//   - nodehost is what runs on each node of such a job: the stage's plugin,
//     locally, as go-plugin requires;
//   - rundir is the handoff between the two: files in the stage run's
//     directory on a file system every node shares.
//
// The local executor, a plugin process per stage run, is the engine's own
// Launcher and is not here. Nothing here schedules work: a cluster's own
// scheduler does.
package executor

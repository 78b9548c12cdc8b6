// Package rundir is the handoff between a gpuflow that submits a stage to
// a cluster scheduler and the node hosts that run it, through files in the
// stage run's directory on a file system every node shares:
//
//	RUN/request.json                  what to run: plugin, stage, decoded body, environment
//	RUN/job-JOBID/node-N/events.jsonl node N's events, one JSON line each, as they happen
//	RUN/job-JOBID/node-N/result.json  node N's outcome: outputs and diagnostics
//
// Each job (a retry is a new job) has a directory of its own. Writers append
// whole lines and write results by rename, so a reader polling over NFS
// never acts on half a record. No network connection is involved: a
// plugin (go-plugin) only ever talks to a process on its own node.
//
// It defines the files, not who writes them: the nodehost package writes
// them, the slurm package reads them.
package rundir

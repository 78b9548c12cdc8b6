package slurm

import (
	"fmt"
	"strings"
	"time"
)

// ScriptName is the script's file name in the run directory.
const ScriptName = "job.sbatch"

// Render returns the sbatch script for j. It is what the plan shows and,
// byte for byte, what apply submits: everything that differs between runs
// (the run directory, the gpuflow executable) comes in as arguments.
func Render(j Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# gpuflow stage %s (plugin %s) through %s.\n", j.Stage, j.Plugin, j.Executor)
	fmt.Fprintf(&b, "# gpuflow apply submits it as: sbatch %s %s RUN_DIR GPUFLOW\n", strings.Join(submitFlags("WORK_DIR", "RUN_DIR"), " "), ScriptName)
	for _, opt := range sbatchOptions(j) {
		fmt.Fprintf(&b, "#SBATCH %s\n", opt)
	}
	b.WriteString("set -euo pipefail\n\n")
	b.WriteString("run_dir=$1 # this stage run's directory, on a file system every node shares\n")
	b.WriteString("gpuflow=$2 # the gpuflow executable the nodes run\n")
	writeExports(&b, "The plan's NCCL environment, the same on every node.", j.NCCLEnv)
	writeExports(&b, "The executor's environment.", j.Env)
	if j.Rendezvous {
		writeRendezvous(&b, j)
	}
	writeSrun(&b, j)
	return b.String()
}

// sbatchOptions are the #SBATCH lines: the executor's settings, one task
// per node (the node host), and no requeueing by Slurm, so that gpuflow's
// retry policy is the only one.
func sbatchOptions(j Job) []string {
	opts := []string{"--job-name=gpuflow-" + j.Stage}
	for _, o := range []struct{ flag, v string }{{"partition", j.Partition}, {"account", j.Account}, {"qos", j.QoS}} {
		if o.v != "" {
			opts = append(opts, "--"+o.flag+"="+o.v)
		}
	}
	if j.TimeLimit > 0 {
		opts = append(opts, "--time="+FormatTimeLimit(j.TimeLimit))
	}
	opts = append(opts, fmt.Sprintf("--nodes=%d", max(1, j.Nodes)), "--ntasks-per-node=1")
	if j.GPUsPerNode > 0 {
		opts = append(opts, fmt.Sprintf("--gpus-per-node=%d", j.GPUsPerNode))
	}
	if j.CPUsPerTask > 0 {
		opts = append(opts, fmt.Sprintf("--cpus-per-task=%d", j.CPUsPerTask))
	}
	if j.Exclusive {
		opts = append(opts, "--exclusive")
	}
	opts = append(opts, "--no-requeue")
	return append(opts, j.ExtraSbatch...)
}

// submitFlags are the sbatch flags apply adds on the command line: where
// the job starts and where the batch script's own output goes.
func submitFlags(workDir, runDir string) []string {
	return []string{"--parsable", "--chdir=" + workDir, "--output=" + runDir + "/slurm-%j.out"}
}

// FormatTimeLimit writes d as Slurm's [D-]HH:MM:SS, rounded up to a minute.
func FormatTimeLimit(d time.Duration) string {
	mins := int64((d + time.Minute - 1) / time.Minute)
	days, hours, mins := mins/(24*60), mins/60%24, mins%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:00", days, hours, mins)
	}
	return fmt.Sprintf("%02d:%02d:00", hours, mins)
}

func writeExports(b *strings.Builder, comment string, env []EnvVar) {
	if len(env) == 0 {
		return
	}
	fmt.Fprintf(b, "\n# %s\n", comment)
	for _, e := range env {
		fmt.Fprintf(b, "export %s=%s\n", e.Name, shellQuote(e.Value))
	}
}

// writeRendezvous exports where torchrun's c10d rendezvous listens (the
// first node's address) and the torchrun arguments that use it: the
// trainer on each node runs torchrun $GPUFLOW_TORCHRUN_ARGS SCRIPT.
func writeRendezvous(b *strings.Builder, j Job) {
	b.WriteString("\n# torchrun's c10d rendezvous on the first node of the allocation.\n")
	b.WriteString("head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | awk 'NR == 1')\n")
	b.WriteString("head_addr=$(scontrol show node \"$head_node\" | sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p')\n")
	fmt.Fprintf(b, "export GPUFLOW_RDZV_ENDPOINT=\"${head_addr:-$head_node}:%d\"\n", RendezvousPort)
	b.WriteString("export GPUFLOW_RDZV_ID=\"$SLURM_JOB_ID\"\n")
	args := "--nnodes=$SLURM_JOB_NUM_NODES"
	if j.GPUsPerNode > 0 {
		args += fmt.Sprintf(" --nproc-per-node=%d", j.GPUsPerNode)
	}
	args += " --rdzv-backend=c10d --rdzv-endpoint=$GPUFLOW_RDZV_ENDPOINT --rdzv-id=$GPUFLOW_RDZV_ID"
	fmt.Fprintf(b, "export GPUFLOW_TORCHRUN_ARGS=\"%s\"\n", args)
}

// writeSrun starts one node host per node. --kill-on-bad-exit ends every
// node's work as soon as one node's fails.
func writeSrun(b *strings.Builder, j Job) {
	b.WriteString("\n# One gpuflow node host per node runs the stage's plugin there and writes\n")
	b.WriteString("# its events and result under $run_dir/job-$SLURM_JOB_ID/node-N/.\n")
	b.WriteString("mkdir -p \"$run_dir/job-$SLURM_JOB_ID\"\n")
	b.WriteString("srun --ntasks-per-node=1 --kill-on-bad-exit=1 \\\n")
	b.WriteString("  --output=\"$run_dir/job-$SLURM_JOB_ID/node-%n.out\" \\\n")
	if j.ContainerImage != "" {
		fmt.Fprintf(b, "  --container-image=%s \\\n", shellQuote(j.ContainerImage))
		b.WriteString("  --container-mounts=\"$PWD:$PWD,$gpuflow:$gpuflow\" --container-workdir=\"$PWD\" \\\n")
	}
	b.WriteString("  \"$gpuflow\" node-host -run-dir \"$run_dir\"\n")
}

// shellQuote quotes s for bash when it holds anything but plain characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/=+@%^") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

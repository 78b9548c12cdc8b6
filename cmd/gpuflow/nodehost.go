package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpuflow/gpuflow/engine/executor/nodehost"
	"github.com/gpuflow/gpuflow/plugins/builtin"
	"github.com/gpuflow/gpuflow/plugins/client"
)

func init() {
	registerCommand("node-host", command{"Run a stage's plugin on this node of a Slurm job (the job script starts it)", runNodeHost})
}

// runNodeHost is `gpuflow node-host -run-dir DIR`, started by srun on each
// node of a stage's job: it runs the stage's plugin here and leaves the
// events and the result in DIR for the gpuflow that submitted the job.
func runNodeHost(env *cliEnv, args []string) int {
	fs := newFlagSet("node-host", env, "")
	runDir := fs.String("run-dir", "", "The stage run's directory on the shared file system (required)")
	if !parseFlags(fs, args) {
		return nodehost.ExitHostFailed
	}
	if *runDir == "" || fs.NArg() > 0 {
		fmt.Fprintln(env.stderr, "usage: gpuflow node-host -run-dir DIR (started on each node by the job script gpuflow apply submits)")
		return nodehost.ExitHostFailed
	}
	plugins, err := client.NewManager(client.Options{Builtins: builtin.Names()})
	if err != nil {
		fmt.Fprintf(env.stderr, "gpuflow node-host: %s\n", err)
		return nodehost.ExitHostFailed
	}
	defer plugins.Close()
	// Slurm ends a job's steps with SIGTERM (scancel, a time limit), and
	// SIGKILL after its KillWait.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return nodehost.Run(ctx, nodehost.Options{RunDir: *runDir, Environ: env.environ, Stderr: env.stderr,
		Start: func(ctx context.Context, name string) (nodehost.Plugin, error) { return plugins.Start(ctx, name) }})
}

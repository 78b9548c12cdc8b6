package nodehost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// Plugin is a plugin process started on this node.
type Plugin interface {
	api.Provider
	// Close ends the process.
	Close()
}

// Options say what a node host runs.
type Options struct {
	// RunDir is the stage run's directory on the shared file system.
	RunDir string
	// Environ is the node host's environment, where srun says which node
	// this is.
	Environ []string
	// Start starts the named plugin on this node.
	Start func(ctx context.Context, name string) (Plugin, error)
	// Stderr receives the node host's own complaints; they end up in the
	// node's output file in the run directory.
	Stderr io.Writer
	// StopGrace is how long a stopped plugin may take before its process
	// is closed. Default 20s, below Slurm's usual KillWait of 30s.
	StopGrace time.Duration
}

// Exit statuses of Run.
const (
	ExitOK          = 0 // the stage succeeded on this node
	ExitStageFailed = 1 // the plugin reported errors
	ExitHostFailed  = 2 // the node host could not run the stage
)

// Run runs the stage on this node and returns the exit status. Cancelling
// ctx (SIGTERM from Slurm) stops the stage.
func Run(ctx context.Context, opts Options) int {
	if opts.StopGrace <= 0 {
		opts.StopGrace = 20 * time.Second
	}
	n, err := nodeFromEnv(opts.Environ)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "gpuflow node-host: %s\n", err)
		return ExitHostFailed
	}
	jobDir := rundir.JobDir(opts.RunDir, n.jobID)
	nodeDir := rundir.NodeDir(jobDir, n.index)
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		fmt.Fprintf(opts.Stderr, "gpuflow node-host: %s\n", err)
		return ExitHostFailed
	}
	res := &rundir.Result{Node: n.index, Host: n.host}
	status := run(ctx, opts, n, jobDir, nodeDir, res)
	if err := rundir.WriteResult(nodeDir, res); err != nil {
		fmt.Fprintf(opts.Stderr, "gpuflow node-host: writing the result: %s\n", err)
		return ExitHostFailed
	}
	return status
}

// run applies the stage and fills res.
func run(ctx context.Context, opts Options, n node, jobDir, nodeDir string, res *rundir.Result) int {
	fail := func(err error) int {
		res.Error = err.Error()
		fmt.Fprintf(opts.Stderr, "gpuflow node-host: %s\n", err)
		return ExitHostFailed
	}
	req, err := rundir.ReadRequest(opts.RunDir)
	if err != nil {
		return fail(err)
	}
	stage := req.Stage.Type + "." + req.Stage.Name
	events, err := rundir.CreateEvents(nodeDir, stage)
	if err != nil {
		return fail(err)
	}
	defer events.Close()
	p, err := opts.Start(ctx, req.Plugin)
	if err != nil {
		return fail(fmt.Errorf("plugin %s did not start on %s: %w", req.Plugin, n.host, err))
	}
	defer p.Close()
	stageReq := req.Stage
	stageReq.Env = n.stageEnv(req.Stage.Env, opts.Environ, jobDir)
	resp, err := apply(ctx, opts, p, &api.ApplyRequest{StageRequest: stageReq, RunDir: nodeDir}, events)
	if err != nil {
		return fail(fmt.Errorf("plugin %s failed on %s: %w", req.Plugin, n.host, err))
	}
	res.Outputs, res.Diagnostics = resp.Outputs, resp.Diagnostics
	if resp.Diagnostics.HasErrors() {
		return ExitStageFailed
	}
	return ExitOK
}

// apply calls ApplyStage; when ctx ends first it asks the plugin to stop,
// and closes it if it has not returned after the grace period.
func apply(ctx context.Context, opts Options, p Plugin, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	type result struct {
		resp *api.ApplyResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := p.ApplyStage(context.WithoutCancel(ctx), req, sink)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), opts.StopGrace)
	defer cancel()
	go p.Stop(stopCtx) // its error changes nothing: the close follows
	select {
	case r := <-done:
		return r.resp, r.err
	case <-stopCtx.Done():
	}
	p.Close()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-time.After(closeWait):
		return nil, errors.New("the plugin did not return after its process was closed")
	}
}

// closeWait bounds the wait for ApplyStage to return once the plugin
// process is closed (its connection breaks at once).
const closeWait = 5 * time.Second

package main

import (
	"os"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/client"
	"github.com/gpuflow/gpuflow/plugins/gpubench"
	"github.com/gpuflow/gpuflow/plugins/gpubench/fakenode"
	"github.com/gpuflow/gpuflow/plugins/gpubench/native"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// fakeGPUMain is gpuflow on a pretend machine of one H200: the benchmark
// plugin it starts drives a fake node, everything else is gpuflow itself.
// Scripts run it as gpuflow-fakegpu; the trainer is faked apart, through
// GPUFLOW_PYTHON.
func fakeGPUMain() {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == client.BuiltinCommand && args[1] == gpubench.Name {
		sdk.Serve(fakeBench())
		os.Exit(0)
	}
	os.Exit(run(args, defaultEnv()))
}

func fakeBench() api.Provider {
	n := fakenode.New(1, "NVIDIA H200")
	return gpubench.NewOn(
		func(native.Options) (node.Node, error) { return n, nil },
		func() (preflight.Host, error) { return n.Host(), nil })
}

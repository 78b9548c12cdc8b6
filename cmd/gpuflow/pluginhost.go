package main

import (
	"context"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/train"
)

// planningProviders are the plugins plan and validate consult. Built-in
// plugins answer in-process: they are this binary's own code, so their
// schemas and plans are identical to what their plugin processes would
// say, without a process start per plan. Apply always runs stages
// out-of-process.
func planningProviders() []api.Provider {
	return []api.Provider{train.Provider{}}
}

func loadPlugins(ctx context.Context) (engine.Plugins, error) {
	return engine.NewPluginSet(ctx, planningProviders()...)
}

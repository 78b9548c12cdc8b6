package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/builtin"
	"github.com/gpuflow/gpuflow/plugins/client"
)

// planningPlugins are the plugins plan and validate consult. Built-in
// plugins answer in-process: they are this binary's own code, so their
// schemas and plans are what their plugin processes would say, without a
// process start per plan. External plugins run as processes, started only
// when a workload uses a type no built-in serves. Apply always runs every
// stage out-of-process.
type planningPlugins struct {
	builtins *engine.PluginSet
	external *client.Manager
}

func loadPlugins(ctx context.Context) (*planningPlugins, error) {
	var providers []api.Provider
	for _, name := range builtin.Names() {
		p, _ := builtin.New(name)
		providers = append(providers, p)
	}
	set, err := engine.NewPluginSet(ctx, providers...)
	if err != nil {
		return nil, err
	}
	m, err := client.NewManager(client.Options{})
	if err != nil {
		return nil, err
	}
	return &planningPlugins{builtins: set, external: m}, nil
}

// Plugin serves a stage type from the built-ins, then the externals.
func (p *planningPlugins) Plugin(ctx context.Context, stageType string) (*engine.Plugin, error) {
	if pl, err := p.builtins.Plugin(ctx, stageType); err == nil {
		return pl, nil
	}
	if len(p.external.Sources()) == 0 {
		return nil, fmt.Errorf("%w %q", engine.ErrUnknownStageType, stageType)
	}
	ext, err := p.external.Provider(ctx, stageType)
	if err != nil {
		return nil, err
	}
	schema, err := ext.Schema(ctx)
	if err != nil {
		return nil, err
	}
	// The plugin's name is the one it was found under (gpuflow-plugin-NAME):
	// apply starts a process per stage by that name.
	return &engine.Plugin{Name: ext.Name(), Version: schema.Version, Provider: ext, Schema: schema.StageTypes[stageType],
		Contract: schema.Contracts[stageType]}, nil
}

// StageTypes lists built-in and external stage types.
func (p *planningPlugins) StageTypes(ctx context.Context) []string {
	types := p.builtins.StageTypes(ctx)
	for _, info := range p.external.List(ctx) {
		types = append(types, info.StageTypes...)
	}
	sort.Strings(types)
	return types
}

// Close ends any external plugin processes planning started.
func (p *planningPlugins) Close() { p.external.Close() }

package engine

import (
	"context"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Plugins gives the engine the plugin that serves each stage type.
type Plugins interface {
	// Plugin returns the plugin serving stageType. An unknown type is
	// reported with ErrUnknownStageType wrapped in the error.
	Plugin(ctx context.Context, stageType string) (*Plugin, error)
	// StageTypes lists every stage type some plugin serves, sorted.
	StageTypes(ctx context.Context) []string
}

// Plugin is a provider with its identity, and the schema and contract of
// one stage type.
type Plugin struct {
	Name     string
	Version  string
	Provider api.Provider
	Schema   *api.BlockSchema
	// Contract says which meta-arguments the stage type takes and what it
	// contributes to the estimate; nil takes none and is not estimated.
	Contract *api.StageContract
}

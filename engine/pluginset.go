package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// PluginSet serves stage types from a fixed list of providers, whether they
// run in this process or behind plugins/client.
type PluginSet struct {
	byType map[string]*Plugin
}

// NewPluginSet asks each provider for its schema and indexes its stage
// types. Two providers serving one type is an error naming both.
func NewPluginSet(ctx context.Context, providers ...api.Provider) (*PluginSet, error) {
	s := &PluginSet{byType: map[string]*Plugin{}}
	for _, p := range providers {
		schema, err := p.Schema(ctx)
		if err != nil {
			return nil, err
		}
		for t, bs := range schema.StageTypes {
			if prev := s.byType[t]; prev != nil {
				return nil, fmt.Errorf("stage type %q is served by both plugin %s and plugin %s; remove one of them", t, prev.Name, schema.Name)
			}
			s.byType[t] = &Plugin{Name: schema.Name, Version: schema.Version, Provider: p, Schema: bs, Contract: schema.Contracts[t]}
		}
	}
	return s, nil
}

// Plugin returns the plugin serving stageType.
func (s *PluginSet) Plugin(_ context.Context, stageType string) (*Plugin, error) {
	if p := s.byType[stageType]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownStageType, stageType)
}

// StageTypes lists the served stage types, sorted.
func (s *PluginSet) StageTypes(context.Context) []string {
	out := make([]string, 0, len(s.byType))
	for t := range s.byType {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

package plandiff

import (
	"encoding/json"
	"testing"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/engine/ncclenv"
	"github.com/gpuflow/gpuflow/hardware"
)

// trainSpec describes a training stage for a test: a built-in hardware
// profile on some nodes, a model preset and a layout, estimated for real.
type trainSpec struct {
	profile   string
	nodes     int
	preset    string
	layout    layout.Layout
	framework string
	args      map[string]any // body arguments besides hardware, model and layout
}

// base7b is Llama 2 7B as TP 2 x DP 4 on one 8-GPU B300 node.
func base7b() trainSpec {
	return trainSpec{profile: "dell-xe9780-b300", nodes: 1, preset: "llama2-7b", framework: estimate.FrameworkMegatron,
		layout: layout.Layout{TP: 2, PP: 1, DP: 4, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 256, Recompute: layout.RecomputeSelective, Precision: "bf16"},
		args:   map[string]any{"lr": 3e-4, "steps": 1000}}
}

// trainingStage builds the stage plan the planner would: resolved
// hardware, model and layout, placement, estimate, and the body as JSON.
func trainingStage(t testing.TB, s trainSpec) *engine.StagePlan {
	t.Helper()
	hw, err := hardware.Builtin(s.profile)
	if err != nil {
		t.Fatal(err)
	}
	hw.Nodes = s.nodes
	shape, err := model.Preset(s.preset)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := layout.Place(s.layout, hw)
	if err != nil {
		t.Fatal(err)
	}
	est, err := estimate.Compute(estimate.Input{Model: shape, Layout: s.layout, Hardware: hw, Placement: pl, Framework: s.framework, TrainSteps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sp := &engine.StagePlan{
		Address: "pretrain.main", Type: "pretrain", Name: "main", Action: engine.ActionCreate,
		Plugin:    engine.PluginRef{Name: "train", Version: "0.1.0"},
		Hardware:  &engine.StageHW{Name: "hw", Nodes: hw.Nodes, GPUsPerNode: hw.GPU.PerNode, GPUModel: hw.GPU.Model, GPUMemoryBytes: hw.GPU.MemoryBytes},
		Model:     &engine.StageModel{Name: s.preset, Shape: shape},
		Layout:    &engine.StageLayout{Name: "l", Layout: s.layout},
		Placement: pl, Estimate: est,
		NCCLEnv: ncclenv.Derive(hw),
	}
	body := map[string]any{"framework": s.framework, "layout": s.layout, "model": shape, "hardware": map[string]any{"nodes": hw.Nodes}}
	for k, v := range s.args {
		body[k] = v
	}
	sp.Config = mustJSON(body)
	return sp
}

// plainStage is a stage without hardware, such as a data prep.
func plainStage(addr string, body map[string]any) *engine.StagePlan {
	return &engine.StagePlan{Address: addr, Type: "data_prep", Action: engine.ActionCreate,
		Plugin: engine.PluginRef{Name: "dataprep", Version: "0.1.0"}, Config: mustJSON(body)}
}

func planOf(stages ...*engine.StagePlan) *engine.Plan {
	return &engine.Plan{FormatVersion: engine.PlanFormatVersion, GpuflowVersion: "test", Stages: stages,
		Variables: map[string]engine.PlanVariable{}}
}

// raw is a JSON literal for expectations.
func raw(s string) json.RawMessage { return json.RawMessage(s) }

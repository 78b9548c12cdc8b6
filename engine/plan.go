package engine

import (
	"encoding/json"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/engine/ncclenv"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// PlanFormatVersion is the version of the plan JSON document (saved plans
// and plan -json). It changes whenever the document's shape changes.
const PlanFormatVersion = "1.0"

// Actions a plan can take for a stage.
const (
	ActionCreate  = "create"
	ActionReplace = "replace"
	ActionNoOp    = "no-op"
)

// Plan is what apply will do, and everything a reviewer needs to judge it.
type Plan struct {
	FormatVersion  string                  `json:"format_version"`
	GpuflowVersion string                  `json:"gpuflow_version"`
	Workload       string                  `json:"workload"`
	ConfigHash     string                  `json:"config_hash"`
	State          PlanState               `json:"state"`
	Variables      map[string]PlanVariable `json:"variables"`
	Targets        []string                `json:"targets,omitempty"`
	Replace        []string                `json:"replace,omitempty"`
	Stages         []*StagePlan            `json:"stages"`
	Edges          [][2]string             `json:"edges"`
	Outputs        []PlanOutput            `json:"outputs,omitempty"`
	Summary        PlanSummary             `json:"summary"`
}

// PlanState identifies the state the plan was made against, so apply can
// refuse a plan whose state has moved on.
type PlanState struct {
	Lineage string `json:"lineage,omitempty"`
	Serial  int64  `json:"serial"`
}

// PlanVariable is a variable's value and where it came from.
type PlanVariable struct {
	Value     json.RawMessage `json:"value"`
	Source    string          `json:"source"`
	Sensitive bool            `json:"sensitive,omitempty"`
}

// PlanOutput is a workload output; its value may be known only after apply.
type PlanOutput struct {
	Name      string          `json:"name"`
	Value     json.RawMessage `json:"value,omitempty"`
	Known     bool            `json:"known"`
	Sensitive bool            `json:"sensitive,omitempty"`
}

// PlanSummary counts stages per action.
type PlanSummary struct {
	Create  int `json:"create"`
	Replace int `json:"replace"`
	NoOp    int `json:"no_op"`
}

// StagePlan is one stage's part of the plan.
type StagePlan struct {
	Address   string            `json:"address"`
	Type      string            `json:"type"`
	Name      string            `json:"name"`
	Plugin    PluginRef         `json:"plugin"`
	DependsOn []string          `json:"depends_on"`
	Action    string            `json:"action"`
	Reasons   []string          `json:"reasons,omitempty"`
	InputHash string            `json:"input_hash,omitempty"`
	Hardware  *StageHW          `json:"hardware,omitempty"`
	Model     *StageModel       `json:"model,omitempty"`
	Layout    *StageLayout      `json:"layout,omitempty"`
	Placement *layout.Placement `json:"placement,omitempty"`
	Claims    api.Claims        `json:"claims"`
	Details   []api.Detail      `json:"details,omitempty"`
	// ExpectedDurationS is the plugin's estimate; zero when it has none.
	ExpectedDurationS float64 `json:"expected_duration_s,omitempty"`
	// Config is the decoded stage body, values known only after apply
	// shown as null and listed in ConfigUnknown.
	Config        json.RawMessage `json:"config"`
	ConfigUnknown []string        `json:"config_unknown,omitempty"`
	Warnings      []string        `json:"warnings,omitempty"`
	// NCCLEnv is the NCCL environment the stage runs with: derived from
	// the hardware, then the stage's nccl_env overrides.
	NCCLEnv []ncclenv.Setting `json:"nccl_env,omitempty"`
	// AutoLayout is the search behind a layout gpuflow chose.
	AutoLayout *AutoLayoutPlan `json:"auto_layout,omitempty"`
	// Estimate predicts memory, time and cost for training stages.
	Estimate *estimate.Estimate `json:"estimate,omitempty"`
	// Executor is where the stage runs when not on this machine, with
	// its job script.
	Executor *ExecutorPlan `json:"executor,omitempty"`
}

// PluginRef names the plugin serving a stage.
type PluginRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// StageHW is the resolved hardware a stage runs on.
type StageHW struct {
	Name           string  `json:"name"`
	Nodes          int     `json:"nodes"`
	GPUsPerNode    int     `json:"gpus_per_node"`
	GPUModel       string  `json:"gpu_model"`
	GPUMemoryBytes int64   `json:"gpu_memory_bytes"`
	Interconnect   string  `json:"interconnect"`
	Network        string  `json:"network"`
	CostPerGPUHour float64 `json:"cost_per_gpu_hour"`
}

// StageModel is the resolved model a stage trains.
type StageModel struct {
	Name string `json:"name"`
	model.Shape
}

// StageLayout is the resolved layout a stage uses.
type StageLayout struct {
	Name string `json:"name"`
	layout.Layout
}

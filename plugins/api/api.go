package api

import (
	"context"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// ProtocolVersion is the plugin protocol version this build speaks.
const ProtocolVersion = 1

// Provider is what a plugin implements: one or more stage types.
type Provider interface {
	// Schema describes the plugin and the body schema of each stage type.
	Schema(ctx context.Context) (*Schema, error)
	// ValidateStage checks a decoded stage body beyond what the schema says.
	ValidateStage(ctx context.Context, req *StageRequest) (Diagnostics, error)
	// PlanStage says what applying the stage will do and what it needs.
	PlanStage(ctx context.Context, req *StageRequest) (*PlanResponse, error)
	// ApplyStage runs the stage, reporting events to sink as it goes.
	ApplyStage(ctx context.Context, req *ApplyRequest, sink EventSink) (*ApplyResponse, error)
	// Stop asks every running ApplyStage to end soon and cleanly.
	Stop(ctx context.Context) error
}

// Schema describes a plugin.
type Schema struct {
	Name         string
	Version      string
	Capabilities []string
	// StageTypes maps a stage type (the first label of a stage block) to the
	// schema of its body.
	StageTypes map[string]*BlockSchema
	// Contracts maps a stage type to what it declares to the engine beyond
	// its body; a stage type without one takes no meta-arguments and is
	// not estimated.
	Contracts map[string]*StageContract
}

// BlockSchema is an hcldec-style description of a block body.
type BlockSchema struct {
	Description string
	Attributes  map[string]*Attribute
	Blocks      map[string]*NestedBlock
}

// Attribute is one argument of a block.
type Attribute struct {
	Type        cty.Type
	Required    bool
	Sensitive   bool
	Description string
}

// Nesting says how often a nested block may appear.
type Nesting int

// Nesting modes.
const (
	NestingSingle Nesting = iota // at most one, decoded as an object
	NestingList                  // any number, decoded as a list of objects
)

// NestedBlock is a block type allowed inside another block.
type NestedBlock struct {
	Nesting  Nesting
	Block    BlockSchema
	MinItems int
	MaxItems int
}

// StageRequest identifies a stage and carries its decoded body.
type StageRequest struct {
	Type string
	Name string
	// Config is the stage body decoded with the plugin's schema. At plan time
	// values that depend on other stages' outputs are unknown.
	Config cty.Value
	// WorkDir is the directory the workload's relative paths start at: the
	// folder of its files, whatever folder gpuflow runs in. The host sends
	// it absolute at apply; at plan it may be relative to the current
	// folder, for display.
	WorkDir string
	// Env is the environment the engine derived for the stage (the plan's
	// NCCL settings among it).
	Env map[string]string
}

// ApplyRequest is a StageRequest plus where the run may write.
type ApplyRequest struct {
	StageRequest
	// RunDir is this run's own directory for logs and artifacts, absolute.
	RunDir string
}

// PlanResponse is what a plugin adds to the plan for one stage.
type PlanResponse struct {
	// Details are ordered lines shown under the stage in the plan.
	Details []Detail
	Claims  Claims
	// ExpectedDuration is zero when the plugin cannot estimate it.
	ExpectedDuration time.Duration
	Diagnostics      Diagnostics
}

// Detail is one labelled line of plan detail.
type Detail struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Claims are the resources a stage holds while it runs; stages whose GPU
// claims overlap never run at the same time.
type Claims struct {
	Nodes       int `json:"nodes"`
	GPUsPerNode int `json:"gpus_per_node"`
}

// ApplyResponse is a stage's result.
type ApplyResponse struct {
	Outputs     map[string]cty.Value
	Diagnostics Diagnostics
}

// EventSink receives a running stage's events. It is safe to call from
// several goroutines.
type EventSink interface {
	Send(Event)
}

// EventSinkFunc adapts a function to an EventSink.
type EventSinkFunc func(Event)

// Send calls f.
func (f EventSinkFunc) Send(e Event) { f(e) }

// Event is one report from a running stage; exactly one of the pointers is set.
type Event struct {
	Time     time.Time
	Log      *Log
	Progress *Progress
	Metric   *Metric
	Artifact *Artifact
}

// Log is a line of output.
type Log struct {
	Level   string // "debug", "info", "warn", "error"
	Message string
}

// Progress says how far a step of the stage has come.
type Progress struct {
	Label string
	Done  float64
	Total float64 // zero when unknown
	Unit  string
}

// Metric is a named measurement, optionally at a training step.
type Metric struct {
	Name  string
	Value float64
	Unit  string
	Step  int64
}

// Artifact is a file or folder the stage produced.
type Artifact struct {
	Name string
	Path string
	// Bytes is the file's size, or the sum of a folder's files.
	Bytes int64
	// Files is how many files a folder holds; 0 for a file.
	Files int64
}

// Severity of a diagnostic.
type Severity int

// Severities.
const (
	Error Severity = iota
	Warning
)

// Diagnostic is a user-facing problem. Path points at the attribute of the
// stage body it concerns, so the host can show the HCL source range.
type Diagnostic struct {
	Severity Severity
	Summary  string
	Detail   string
	Path     cty.Path
}

// Diagnostics is a list of Diagnostic; nil means no problems.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (d Diagnostics) HasErrors() bool {
	for _, x := range d {
		if x.Severity == Error {
			return true
		}
	}
	return false
}

package dsl

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Config is a loaded workload: every block decoded as far as the language
// alone allows, with variables and locals evaluated.
type Config struct {
	// Dir is the directory relative paths in the workload are read from.
	Dir string
	// Files are the workload's files in the order they were read.
	Files []string
	// Sources holds each file's bytes, for hashing and for rendering
	// diagnostics with their source lines.
	Sources map[string][]byte

	Variables map[string]*Variable
	Locals    map[string]*Local
	Outputs   []*Output
	Hardware  map[string]*Hardware
	Models    map[string]*Model
	Layouts   map[string]*Layout
	Datasets  map[string]*Dataset
	// Executors are keyed KIND.NAME.
	Executors map[string]*Executor
	// Stages are in source order.
	Stages []*Stage

	// Evaluated is true once variables and locals have values and the
	// named blocks were decoded, even if some of those failed: the blocks
	// that did decode can then be checked further, so that one load
	// reports every problem it can.
	Evaluated bool
}

// Variable is a declared input variable and the value it ended up with.
type Variable struct {
	Name        string
	Description string
	Type        cty.Type
	Default     cty.Value
	Sensitive   bool
	Validations []*Validation
	DeclRange   hcl.Range
	// Value is the final value after defaults and every input source.
	Value cty.Value
	// ValueSource says where Value came from: "default", "env", a var file
	// path, or "-var".
	ValueSource string
}

// Validation is a custom rule on a variable's value.
type Validation struct {
	Condition    hcl.Expression
	ErrorMessage hcl.Expression
	DeclRange    hcl.Range
}

// Local is one named value of a locals block.
type Local struct {
	Name  string
	Expr  hcl.Expression
	Range hcl.Range
	Value cty.Value
}

// Output is a value the workload reports after apply.
type Output struct {
	Name        string
	Description string
	Sensitive   bool
	Expr        hcl.Expression
	DeclRange   hcl.Range
}

// Hardware is a hardware block; package hardware decodes its body.
type Hardware struct {
	Name      string
	Body      hcl.Body
	DeclRange hcl.Range
}

// Dataset is a named bag of attributes for the plugins that read it.
type Dataset struct {
	Name      string
	Value     cty.Value // an object of the block's attributes
	body      hcl.Body
	DeclRange hcl.Range
}

// Stage is a stage block. Body holds only the plugin-owned arguments: the
// engine's own meta-arguments are already taken out.
type Stage struct {
	Type      string
	Name      string
	Body      hcl.Body
	DependsOn []hcl.Traversal
	// Uses holds the UseArguments the stage sets, by name, unevaluated:
	// the engine checks them against what the stage type takes.
	Uses map[string]*hcl.Attribute
	// NCCLEnv overrides the NCCL settings the engine derives from the
	// hardware; NCCLEnvRange is where it was written.
	NCCLEnv      map[string]string
	NCCLEnvRange hcl.Range
	ncclEnvExpr  hcl.Expression
	DeclRange    hcl.Range
	TypeRange    hcl.Range
	NameRange    hcl.Range

	// Executor is where the stage runs; nil runs it on this machine.
	Executor *ExecutorRef
}

// Addr is the stage's address, TYPE.NAME, as used on the command line and
// in state.
func (s *Stage) Addr() string { return s.Type + "." + s.Name }

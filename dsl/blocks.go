package dsl

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Model is a model block: a preset and/or shape arguments, not yet resolved
// against the preset library (the engine does that).
type Model struct {
	Name      string
	DeclRange hcl.Range
	Spec      ModelSpec
	// Ranges maps each argument present to its expression's source range.
	// Nested arguments are "BLOCK.NAME"; a nested block maps to its header.
	Ranges map[string]hcl.Range
	// Decoded is false when the body had errors; Spec is then partial.
	Decoded bool
	body    hcl.Body
}

// ModelSpec holds the arguments of a model block; nil means not set.
type ModelSpec struct {
	Preset *string `hcl:"preset,optional"`
	// From names a Hugging Face model folder whose config.json gives the shape.
	From           *string `hcl:"from,optional"`
	Layers         *int    `hcl:"layers,optional"`
	Hidden         *int    `hcl:"hidden,optional"`
	FFNHidden      *int    `hcl:"ffn_hidden,optional"`
	Heads          *int    `hcl:"heads,optional"`
	KVHeads        *int    `hcl:"kv_heads,optional"`
	Vocab          *int    `hcl:"vocab,optional"`
	SeqLen         *int    `hcl:"seq_len,optional"`
	TiedEmbeddings *bool   `hcl:"tied_embeddings,optional"`
	Activation     *string `hcl:"activation,optional"`
}

// Layout is a layout block, not yet checked against a model or hardware.
type Layout struct {
	Name      string
	DeclRange hcl.Range
	Spec      LayoutSpec
	Ranges    map[string]hcl.Range
	// Decoded is false when the body had errors; Spec is then partial.
	Decoded bool
	body    hcl.Body
}

// LayoutSpec holds the arguments of a layout block; nil means not set.
type LayoutSpec struct {
	TP               *int    `hcl:"tp,optional"`
	PP               *int    `hcl:"pp,optional"`
	DP               *int    `hcl:"dp,optional"`
	CP               *int    `hcl:"cp,optional"`
	VP               *int    `hcl:"vp,optional"`
	ZeRO             *int    `hcl:"zero,optional"`
	FSDP             *bool   `hcl:"fsdp,optional"`
	MicroBatch       *int    `hcl:"micro_batch,optional"`
	GlobalBatch      *int    `hcl:"global_batch,optional"`
	Recompute        *string `hcl:"recompute,optional"`
	SequenceParallel *bool   `hcl:"sequence_parallel,optional"`
	Precision        *string `hcl:"precision,optional"`
	// Framework options (docs/estimator.md); nil means the framework's
	// default.
	Attention          *string `hcl:"attention,optional"`
	ScatterGather      *bool   `hcl:"scatter_gather,optional"`
	GradReduceDType    *string `hcl:"grad_reduce_dtype,optional"`
	OverlapGradReduce  *bool   `hcl:"overlap_grad_reduce,optional"`
	GradAccumFusion    *bool   `hcl:"grad_accumulation_fusion,optional"`
	AsyncTPAllReduce   *bool   `hcl:"async_tp_allreduce,optional"`
	ScatterGatherGrads *bool   `hcl:"scatter_gather_grads,optional"`
	// Layers on the first and last pipeline stage; nil splits evenly.
	FirstStageLayers *int        `hcl:"first_stage_layers,optional"`
	LastStageLayers  *int        `hcl:"last_stage_layers,optional"`
	Auto             *AutoLayout `hcl:"auto,block"`
}

// AutoLayout asks the engine to search for the layout.
type AutoLayout struct {
	Objective *string `hcl:"objective,optional"`
	MaxTP     *int    `hcl:"max_tp,optional"`
	MaxPP     *int    `hcl:"max_pp,optional"`
	DeclRange hcl.Range
}

// decodeNamedBlocks decodes model, layout and dataset blocks now that
// variables and locals have values. A block that refers to an undeclared
// variable or local is not evaluated, so the mistake is reported once.
func (c *Config) decodeNamedBlocks() hcl.Diagnostics {
	ctx := c.EvalContext()
	var diags hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
		m := c.Models[name]
		var d hcl.Diagnostics
		m.Ranges, m.Decoded, d = c.decodeSpec(m.body, ctx, &m.Spec)
		diags = append(diags, d...)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Layouts)) {
		l := c.Layouts[name]
		var d hcl.Diagnostics
		l.Ranges, l.Decoded, d = c.decodeSpec(l.body, ctx, &l.Spec)
		diags = append(diags, d...)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Datasets)) {
		diags = append(diags, c.Datasets[name].decode(c, ctx)...)
	}
	for _, s := range c.Stages {
		diags = append(diags, s.decodeNCCLEnv(c, ctx)...)
	}
	return append(diags, c.decodeExecutors(ctx)...)
}

// decodeNCCLEnv evaluates the stage's nccl_env map, reporting undeclared
// references the way stage bodies do.
func (s *Stage) decodeNCCLEnv(c *Config, ctx *hcl.EvalContext) hcl.Diagnostics {
	if s.ncclEnvExpr == nil {
		return nil
	}
	if diags := c.CheckReferences(s.ncclEnvExpr.Variables()); diags.HasErrors() {
		return diags
	}
	return gohcl.DecodeExpression(s.ncclEnvExpr, ctx, &s.NCCLEnv)
}

// decodeSpec decodes a model or layout body into spec, after checking its
// references so an undeclared variable is reported once, not again as a
// failed evaluation. decoded is false when anything went wrong.
func (c *Config) decodeSpec(body hcl.Body, ctx *hcl.EvalContext, spec any) (ranges map[string]hcl.Range, decoded bool, diags hcl.Diagnostics) {
	if diags := c.CheckReferences(BodyTraversals(body)); diags.HasErrors() {
		return nil, false, diags
	}
	ranges, diags = decodeArgs(body, ctx, spec)
	return ranges, !diags.HasErrors(), diags
}

func (d *Dataset) decode(c *Config, ctx *hcl.EvalContext) hcl.Diagnostics {
	d.Value = cty.EmptyObjectVal
	if diags := c.CheckReferences(BodyTraversals(d.body)); diags.HasErrors() {
		return diags
	}
	attrs, diags := d.body.JustAttributes()
	vals := map[string]cty.Value{}
	for name, attr := range attrs {
		v, vdiags := attr.Expr.Value(ctx)
		if !vdiags.HasErrors() {
			vdiags = checkRange(v, attr.Expr.Range().Ptr())
		}
		diags = append(diags, vdiags...)
		if vdiags.HasErrors() {
			v = cty.DynamicVal
		}
		vals[name] = v
	}
	d.Value = cty.ObjectVal(vals)
	return diags
}

func (c *Config) decodeOutput(b *hcl.Block) hcl.Diagnostics {
	content, diags := b.Body.Content(outputSchema)
	if diags.HasErrors() {
		return diags
	}
	o := &Output{Name: b.Labels[0], Expr: content.Attributes["value"].Expr, DeclRange: b.DefRange}
	if a, ok := content.Attributes["description"]; ok {
		diags = append(diags, gohcl.DecodeExpression(a.Expr, nil, &o.Description)...)
	}
	if a, ok := content.Attributes["sensitive"]; ok {
		diags = append(diags, gohcl.DecodeExpression(a.Expr, nil, &o.Sensitive)...)
	}
	c.Outputs = append(c.Outputs, o)
	return diags
}

func (c *Config) decodeStage(b *hcl.Block) hcl.Diagnostics {
	content, remain, diags := b.Body.PartialContent(stageMetaSchema)
	s := &Stage{Type: b.Labels[0], Name: b.Labels[1], Body: remain, DeclRange: b.DefRange,
		TypeRange: b.LabelRanges[0], NameRange: b.LabelRanges[1], Uses: map[string]*hcl.Attribute{}}
	for _, name := range UseArguments {
		if a, ok := content.Attributes[name]; ok {
			s.Uses[name] = a
		}
	}
	for i, label := range b.Labels {
		if !hclsyntax.ValidIdentifier(label) {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid stage label",
				Detail: fmt.Sprintf("%q is not a valid identifier: use letters, digits, underscores and dashes, starting with a letter.", label), Subject: b.LabelRanges[i].Ptr()})
		}
	}
	if a, ok := content.Attributes["depends_on"]; ok {
		trs, tdiags := decodeTraversalList(a.Expr)
		diags = append(diags, tdiags...)
		s.DependsOn = trs
	}
	if a, ok := content.Attributes["nccl_env"]; ok {
		s.ncclEnvExpr, s.NCCLEnvRange = a.Expr, a.Expr.Range()
	}
	if a, ok := content.Attributes["executor"]; ok {
		var ediags hcl.Diagnostics
		s.Executor, ediags = decodeExecutorRef(a)
		diags = append(diags, ediags...)
	}
	c.Stages = append(c.Stages, s)
	return diags
}

// decodeTraversalList reads a list of bare references such as
// [stage.benchmark.acceptance].
func decodeTraversalList(expr hcl.Expression) ([]hcl.Traversal, hcl.Diagnostics) {
	exprs, diags := hcl.ExprList(expr)
	if diags.HasErrors() {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid depends_on",
			Detail:  "depends_on must be a list of stage references, like depends_on = [stage.TYPE.NAME], even for one stage.",
			Subject: expr.Range().Ptr()}}
	}
	var out []hcl.Traversal
	for _, e := range exprs {
		tr, tdiags := hcl.AbsTraversalForExpr(e)
		if tdiags.HasErrors() {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid depends_on reference",
				Detail: "Each depends_on entry must be a reference to a stage, like stage.TYPE.NAME.", Subject: e.Range().Ptr()})
			continue
		}
		out = append(out, tr)
	}
	return out, diags
}

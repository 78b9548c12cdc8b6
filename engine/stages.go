package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/dag"
)

// ErrUnknownStageType is wrapped by Plugins.Plugin for a type nobody serves.
var ErrUnknownStageType = errors.New("unknown stage type")

// stageNode is a stage with its plugin and what it refers to.
type stageNode struct {
	cfg    *dsl.Stage
	plugin *Plugin
	spec   hcldec.Spec
	// upstream are the addresses of stages this one depends on.
	upstream map[string]bool
	// hardware, model and layout name the blocks the stage's arguments of
	// those names refer to ("" when absent).
	hardware, model, layout string
	layoutAuto              bool
	useRange                map[string]hcl.Range
	// layoutRanges are the source ranges of the layout block's arguments,
	// where a plugin's diagnostic about one of them points.
	layoutRanges map[string]hcl.Range
}

// Namespaces a reference may start with.
var namespaces = []string{"var", "local", "hardware", "model", "layout", "dataset", "stage"}

// analyseStages finds each stage's plugin and references and builds the
// dependency graph from explicit depends_on and implicit stage references.
func (w *Workload) analyseStages(ctx context.Context, plugins Plugins) (map[string]*stageNode, *dag.Graph, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	nodes := map[string]*stageNode{}
	g := dag.New()
	for _, s := range w.Config.Stages {
		if _, dup := nodes[s.Addr()]; dup {
			continue // dsl.Load reported it, and CheckStages runs after that
		}
		n, ndiags := w.stageNode(ctx, s, plugins)
		diags = append(diags, ndiags...)
		nodes[s.Addr()] = n
		g.Add(s.Addr())
	}
	for addr, n := range nodes {
		for up := range n.upstream {
			if _, ok := nodes[up]; ok {
				g.Connect(addr, up)
			}
		}
	}
	if cycle := g.Cycle(); cycle != nil {
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Dependency cycle between stages",
			Detail:  fmt.Sprintf("The stages depend on each other in a cycle: %s. Remove one of these references or depends_on entries.", formatStageCycle(cycle)),
			Subject: nodes[cycle[0]].cfg.DeclRange.Ptr()})
	}
	return nodes, g, append(diags, w.checkOutputs()...)
}

// checkOutputs checks what output values refer to, as stage bodies are
// checked: outputs are evaluated only after planning, where an error can
// no longer point at its source.
func (w *Workload) checkOutputs() hcl.Diagnostics {
	refs := &stageNode{upstream: map[string]bool{}}
	var diags hcl.Diagnostics
	for _, o := range w.Config.Outputs {
		for _, tr := range o.Expr.Variables() {
			diags = append(diags, w.checkRef(refs, tr)...)
		}
	}
	return diags
}

func formatStageCycle(cycle []string) string {
	out := ""
	for i, c := range cycle {
		if i > 0 {
			out += " -> "
		}
		out += "stage." + c
	}
	return out
}

func (w *Workload) stageNode(ctx context.Context, s *dsl.Stage, plugins Plugins) (*stageNode, hcl.Diagnostics) {
	n := &stageNode{cfg: s, upstream: map[string]bool{}, useRange: map[string]hcl.Range{}}
	p, err := plugins.Plugin(ctx, s.Type)
	if errors.Is(err, ErrUnknownStageType) {
		types := plugins.StageTypes(ctx)
		return n, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown stage type",
			Detail:  fmt.Sprintf("No plugin serves stage type %q.%s Known types: %s. Install the plugin (gpuflow plugins lists them) or fix the type.", s.Type, didYouMean(s.Type, types), joinNames(types)),
			Subject: s.TypeRange.Ptr()}}
	}
	if err != nil {
		return n, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Plugin failed",
			Detail: fmt.Sprintf("Starting the plugin for stage type %q failed: %s.", s.Type, err), Subject: s.TypeRange.Ptr()}}
	}
	n.plugin, n.spec = p, p.Schema.DecoderSpec()
	var diags hcl.Diagnostics
	for _, tr := range s.DependsOn {
		addr, ok := stageAddr(tr)
		if !ok {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid depends_on reference",
				Detail: "depends_on entries must name a stage as stage.TYPE.NAME.", Subject: tr.SourceRange().Ptr()})
			continue
		}
		diags = append(diags, w.checkStageRef(addr, tr)...)
		n.upstream[addr] = true
	}
	for _, tr := range hcldec.Variables(s.Body, n.spec) {
		diags = append(diags, w.checkRef(n, tr)...)
	}
	diags = append(diags, w.readUses(n)...)
	return n, diags
}

// stageAddr turns stage.TYPE.NAME[...] into TYPE.NAME.
func stageAddr(tr hcl.Traversal) (string, bool) {
	if tr.RootName() != "stage" || len(tr) < 3 {
		return "", false
	}
	t, ok1 := tr[1].(hcl.TraverseAttr)
	n, ok2 := tr[2].(hcl.TraverseAttr)
	if !ok1 || !ok2 {
		return "", false
	}
	return t.Name + "." + n.Name, true
}

func (w *Workload) checkStageRef(addr string, tr hcl.Traversal) hcl.Diagnostics {
	var all []string
	for _, s := range w.Config.Stages {
		if s.Addr() == addr {
			return nil
		}
		all = append(all, s.Addr())
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared stage",
		Detail:  fmt.Sprintf("There is no stage %s.%s Declare it with a stage block or fix the reference.", addr, didYouMean(addr, all)),
		Subject: tr.SourceRange().Ptr()}}
}

// checkRef validates one reference in a stage body and records stage
// references as implicit dependencies.
func (w *Workload) checkRef(n *stageNode, tr hcl.Traversal) hcl.Diagnostics {
	root := tr.RootName()
	if root == "stage" {
		addr, ok := stageAddr(tr)
		if !ok {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid stage reference",
				Detail: "A stage reference names the stage as stage.TYPE.NAME, e.g. stage.data_prep.fineweb.outputs.train.", Subject: tr.SourceRange().Ptr()}}
		}
		n.upstream[addr] = true
		return w.checkStageRef(addr, tr)
	}
	names, isBlock := w.blockNames(root)
	if !isBlock {
		if root == "var" || root == "local" {
			return w.Config.CheckReferences([]hcl.Traversal{tr})
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown reference",
			Detail:  fmt.Sprintf("%q is not something a workload can refer to.%s References start with one of: %s.", root, didYouMean(root, namespaces), joinNames(namespaces)),
			Subject: tr.SourceRange().Ptr()}}
	}
	if len(tr) < 2 {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid reference",
			Detail: fmt.Sprintf("A %s reference names the block, as %s.NAME.", root, root), Subject: tr.SourceRange().Ptr()}}
	}
	attr, ok := tr[1].(hcl.TraverseAttr)
	if !ok || contains(names, attr.Name) {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Reference to undeclared %s block", root),
		Detail: fmt.Sprintf("There is no %s block named %q.%s%s Declare it with a %s block or fix the reference.",
			root, attr.Name, didYouMean(attr.Name, names), declaredList(names), root),
		Subject: tr.SourceRange().Ptr()}}
}

func (w *Workload) blockNames(root string) ([]string, bool) {
	switch root {
	case "hardware":
		return slices.Sorted(maps.Keys(w.Config.Hardware)), true
	case "model":
		return slices.Sorted(maps.Keys(w.Config.Models)), true
	case "layout":
		return slices.Sorted(maps.Keys(w.Config.Layouts)), true
	case "dataset":
		return slices.Sorted(maps.Keys(w.Config.Datasets)), true
	}
	return nil, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CheckStages reports problems with stage types, references and
// dependency cycles. It needs only the parsed stage blocks, so it can run
// even when other blocks failed to decode.
func (w *Workload) CheckStages(ctx context.Context, plugins Plugins) hcl.Diagnostics {
	if w.Config == nil {
		return nil
	}
	_, _, diags := w.analyseStages(ctx, plugins)
	return diags
}

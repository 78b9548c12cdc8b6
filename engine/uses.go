package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// readUses checks what the stage's hardware, model and layout
// meta-arguments refer to, for those its stage type takes, and records the
// blocks they name; the engine needs them for placement and estimates.
// layout = "auto" asks for a searched layout. Whether the stage sets what
// its type requires, and only that, is checked with the rest of its body
// when it is decoded (checkUses).
func (w *Workload) readUses(n *stageNode) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range dsl.UseArguments {
		a, set := n.cfg.Uses[name]
		if _, takes := n.plugin.Contract.Takes(name); set && takes {
			diags = append(diags, w.readUse(n, name, a)...)
		}
	}
	return diags
}

// checkUses reports meta-arguments the stage sets but its type does not
// take, and those its type requires but the stage leaves out.
func checkUses(n *stageNode) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range dsl.UseArguments {
		arg, takes := n.plugin.Contract.Takes(name)
		a, set := n.cfg.Uses[name]
		switch {
		case set && !takes:
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported argument",
				Detail:  fmt.Sprintf("An argument named %q is not expected here: stage type %q takes no %s.", name, n.cfg.Type, name),
				Subject: a.NameRange.Ptr()})
		case !set && arg.Required:
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing required argument",
				Detail:  fmt.Sprintf("The argument %q is required, but no definition was found.", name),
				Subject: n.cfg.Body.MissingItemRange().Ptr()})
		}
	}
	return diags
}

// readUse reads one meta-argument: a reference to a block of its own
// namespace, or "auto" for the layout.
func (w *Workload) readUse(n *stageNode, name string, a *hcl.Attribute) hcl.Diagnostics {
	n.useRange[name] = a.Expr.Range()
	if name == api.MetaLayout {
		if v, vdiags := a.Expr.Value(nil); !vdiags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() && v.AsString() == "auto" {
			n.layoutAuto = true
			return nil
		}
	}
	tr, tdiags := hcl.AbsTraversalForExpr(a.Expr)
	var step hcl.TraverseAttr
	if !tdiags.HasErrors() && len(tr) == 2 && tr.RootName() == name {
		step, _ = tr[1].(hcl.TraverseAttr)
	}
	if step.Name == "" {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Invalid %s argument", name),
			Detail:  fmt.Sprintf("%s must refer to a %s block, as %s = %s.NAME.", name, name, name, name),
			Subject: a.Expr.Range().Ptr()}}
	}
	if diags := w.checkRef(n, tr); diags.HasErrors() {
		return diags
	}
	switch name {
	case api.MetaHardware:
		n.hardware = step.Name
	case api.MetaModel:
		n.model = step.Name
	case api.MetaLayout:
		n.layout = step.Name
		if l := w.Config.Layouts[step.Name]; l != nil {
			n.layoutRanges = l.Ranges
		}
	}
	return nil
}

// withUses adds the meta-arguments the stage type takes to its decoded
// body, under their own names (null where the stage leaves one out), as
// the plugin's contract promises.
func withUses(n *stageNode, config cty.Value, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	attrs := map[string]cty.Value{}
	if config.Type().IsObjectType() && !config.IsNull() {
		attrs = config.AsValueMap()
		if attrs == nil {
			attrs = map[string]cty.Value{}
		}
	}
	diags := checkUses(n)
	if diags.HasErrors() || n.plugin.Contract == nil {
		return config, diags
	}
	for _, m := range n.plugin.Contract.MetaArguments {
		a, set := n.cfg.Uses[m.Name]
		if !set {
			attrs[m.Name] = cty.NullVal(cty.DynamicPseudoType)
			continue
		}
		v, vdiags := a.Expr.Value(ctx)
		diags = append(diags, vdiags...)
		attrs[m.Name] = v
	}
	return cty.ObjectVal(attrs), diags
}

// useDiags turns a plugin's diagnostics into HCL ones: those about a
// meta-argument point at the meta-argument, the rest into the body.
func useDiags(n *stageNode, d api.Diagnostics) hcl.Diagnostics {
	var rest api.Diagnostics
	var out hcl.Diagnostics
	for _, diag := range d {
		a := useAttribute(n.cfg, diag.Path)
		if a == nil {
			rest = append(rest, diag)
			continue
		}
		out = append(out, api.ToHCL(api.Diagnostics{diag}, n.cfg.Body, n.spec)...)
		out[len(out)-1].Subject = a.Expr.Range().Ptr()
		if r, ok := n.layoutRanges[layoutArgument(diag.Path)]; ok {
			out[len(out)-1].Subject = r.Ptr()
		}
	}
	return append(out, api.ToHCL(rest, n.cfg.Body, n.spec)...)
}

// layoutArgument is the layout argument a path names (layout.tp names
// "tp"), or "".
func layoutArgument(path cty.Path) string {
	if len(path) < 2 {
		return ""
	}
	first, ok1 := path[0].(cty.GetAttrStep)
	second, ok2 := path[1].(cty.GetAttrStep)
	if !ok1 || !ok2 || first.Name != api.MetaLayout {
		return ""
	}
	return second.Name
}

// useAttribute is the meta-argument a path starts at, or nil.
func useAttribute(s *dsl.Stage, path cty.Path) *hcl.Attribute {
	if len(path) == 0 {
		return nil
	}
	step, ok := path[0].(cty.GetAttrStep)
	if !ok {
		return nil
	}
	return s.Uses[step.Name]
}

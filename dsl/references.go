package dsl

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// CheckReferences reports references to variables and locals the workload
// does not declare. HCL alone would say only that "this object does not
// have an attribute", and then the unknown value would be reported again
// wherever it is used. Other namespaces are the engine's to check.
func (c *Config) CheckReferences(trs []hcl.Traversal) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, tr := range trs {
		switch root := tr.RootName(); root {
		case "var":
			diags = append(diags, checkName(tr, "input variable", "variable", slices.Sorted(maps.Keys(c.Variables)))...)
		case "local":
			diags = append(diags, checkName(tr, "local value", "locals", slices.Sorted(maps.Keys(c.Locals)))...)
		}
	}
	return diags
}

// checkName reports tr unless its second step names one of names.
func checkName(tr hcl.Traversal, what, block string, names []string) hcl.Diagnostics {
	root := tr.RootName()
	var step hcl.TraverseAttr
	if len(tr) > 1 {
		step, _ = tr[1].(hcl.TraverseAttr)
	}
	if step.Name == "" {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid reference",
			Detail:  fmt.Sprintf("%s must be followed by the name of a %s, as %s.NAME.", root, what, root),
			Subject: tr.SourceRange().Ptr()}}
	}
	if contains(names, step.Name) {
		return nil
	}
	declare := fmt.Sprintf(`a %s "%s" block`, block, step.Name)
	if block == "locals" {
		declare = "a locals block"
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared " + what,
		Detail: fmt.Sprintf("No %s named %q is declared.%s Declare it in %s or fix the reference.",
			what, step.Name, didYouMean(step.Name, names), declare),
		Subject: tr.SourceRange().Ptr()}}
}

// BodyTraversals returns every reference in a native-syntax body, nested
// blocks included.
func BodyTraversals(body hcl.Body) []hcl.Traversal {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	var out []hcl.Traversal
	for _, name := range slices.Sorted(maps.Keys(sb.Attributes)) {
		out = append(out, sb.Attributes[name].Expr.Variables()...)
	}
	for _, b := range sb.Blocks {
		out = append(out, BodyTraversals(b.Body)...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

func (c *Config) decodeLocals(b *hcl.Block) hcl.Diagnostics {
	attrs, diags := b.Body.JustAttributes()
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		attr := attrs[name]
		if prev, dup := c.Locals[name]; dup {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate local value",
				Detail:  fmt.Sprintf("A local value named %q was already defined at %s. Local names must be unique across all locals blocks.", name, prev.Range),
				Subject: attr.NameRange.Ptr()})
			continue
		}
		c.Locals[name] = &Local{Name: name, Expr: attr.Expr, Range: attr.Range}
	}
	return diags
}

// evaluateLocals evaluates locals in dependency order: a topological sort
// of the local.NAME references, so each local is evaluated exactly once
// after everything it reads.
func (c *Config) evaluateLocals() hcl.Diagnostics {
	order, diags := c.localOrder()
	if diags.HasErrors() {
		return diags
	}
	values := map[string]cty.Value{}
	for _, name := range order {
		l := c.Locals[name]
		ctx := c.baseContext(values)
		val, vdiags := l.Expr.Value(ctx)
		if !vdiags.HasErrors() {
			vdiags = checkRange(val, l.Expr.Range().Ptr())
		}
		diags = append(diags, vdiags...)
		if vdiags.HasErrors() {
			val = cty.DynamicVal
		}
		l.Value = val
		values[name] = val
	}
	return diags
}

// localOrder sorts locals so that each comes after the locals it
// references, reporting undeclared variables and locals and cycles.
func (c *Config) localOrder() ([]string, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	deps := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(c.Locals)) {
		trs := c.Locals[name].Expr.Variables()
		diags = append(diags, c.CheckReferences(trs)...)
		for _, tr := range trs {
			if dep, ok := localRef(tr); ok && c.Locals[dep] != nil {
				deps[name] = append(deps[name], dep)
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	order, cycle := topoSort(slices.Sorted(maps.Keys(c.Locals)), deps)
	if cycle != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cycle in local values",
			Detail:  fmt.Sprintf("Local values refer to each other in a cycle: %s. Break the cycle by removing one of these references.", formatCycle("local.", cycle)),
			Subject: c.Locals[cycle[0]].Range.Ptr()}}
	}
	return order, nil
}

func localRef(tr hcl.Traversal) (string, bool) {
	if tr.RootName() != "local" || len(tr) < 2 {
		return "", false
	}
	attr, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		return "", false
	}
	return attr.Name, true
}

// topoSort orders nodes so every node follows its deps. On a cycle it
// returns the nodes of one cycle in order, the first repeated at the end.
func topoSort(nodes []string, deps map[string][]string) (order, cycle []string) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) bool
	visit = func(n string) bool {
		switch state[n] {
		case done:
			return true
		case visiting:
			i := indexOf(stack, n)
			cycle = append(append([]string{}, stack[i:]...), n)
			return false
		}
		state[n] = visiting
		stack = append(stack, n)
		for _, d := range deps[n] {
			if !visit(d) {
				return false
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		order = append(order, n)
		return true
	}
	for _, n := range nodes {
		if !visit(n) {
			return nil, cycle
		}
	}
	return order, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func formatCycle(prefix string, cycle []string) string {
	parts := make([]string, len(cycle))
	for i, n := range cycle {
		parts[i] = prefix + n
	}
	return strings.Join(parts, " -> ")
}

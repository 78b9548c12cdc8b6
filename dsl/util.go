package dsl

import (
	"fmt"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Suggest returns the candidate closest to given, or "" when none is close
// enough to be a likely typo.
func Suggest(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(given, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean formats Suggest's answer as a sentence of its own, with a
// leading space, to follow a sentence that has ended.
func didYouMean(given string, candidates []string) string {
	if s := Suggest(given, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

// baseContext is the evaluation context for variables, locals and
// functions; the engine adds the block namespaces on top.
func (c *Config) baseContext(locals map[string]cty.Value) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for name, v := range c.Variables {
		vars[name] = v.Value
	}
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":   cty.ObjectVal(vars),
			"local": cty.ObjectVal(locals),
		},
		Functions: Functions(),
	}
}

// EvalContext returns a context with var, local and the functions.
func (c *Config) EvalContext() *hcl.EvalContext {
	locals := map[string]cty.Value{}
	for name, l := range c.Locals {
		locals[name] = l.Value
	}
	return c.baseContext(locals)
}

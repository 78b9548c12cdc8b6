package hardware

import (
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Decode resolves the body of a workload's `hardware "NAME" { ... }` block.
//
// With `profile = "<built-in>"` the named built-in is the starting point and
// every other argument overrides one field of it, inside nested blocks too.
// A gpu block's `datasheet = "<entry>"` takes the GPU's figures from the
// catalogue, which the block's own arguments then override.
// Without a profile the body must declare every figure estimates need.
// Expressions are evaluated in ctx, which may be nil; a null value leaves
// the field as the profile had it, and a value not known until apply is an
// error, since a plan needs the hardware. On any error the profile is nil
// and the diagnostics say what to fix, each with a Subject range.
func Decode(name string, body hcl.Body, ctx *hcl.EvalContext) (*Profile, hcl.Diagnostics) {
	p, _, diags := decode(name, body, ctx, builtinEntry)
	return p, diags
}

// presence records which argument paths ("gpu.count") hold a value, so that
// required arguments are checked the same way inline and over a profile.
type presence map[string]bool

// lookupFunc finds a built-in to start from; nil when profiles may not
// refer to one (the built-ins themselves).
type lookupFunc func(name string) (builtin, error)

func decode(name string, body hcl.Body, ctx *hcl.EvalContext, lookup lookupFunc) (*Profile, presence, hcl.Diagnostics) {
	if body == nil {
		body = hcl.EmptyBody()
	}
	decl, diags := gather(body)
	p, present, complete, startDiags := start(decl, ctx, lookup)
	diags = append(diags, startDiags...)
	diags = append(diags, applyDatasheet(p, present, decl, ctx)...)
	diags = append(diags, assignAll(p, present, decl, ctx)...)
	if !complete {
		return nil, nil, diags
	}
	diags = append(diags, checkRequired(p, present, decl)...)
	if !diags.HasErrors() {
		diags = append(diags, checkConsistent(p, decl)...)
	}
	if diags.HasErrors() {
		return nil, nil, diags
	}
	p.Name = name
	return p, present, diags
}

// start returns the profile that arguments are applied to: a copy of the
// named built-in, or an empty one. complete is false when the profile named
// cannot be used, so that required-argument checks would only add noise.
func start(decl declaration, ctx *hcl.EvalContext, lookup lookupFunc) (p *Profile, present presence, complete bool, diags hcl.Diagnostics) {
	attr := decl.attrs[attrProfile]
	if attr == nil {
		return &Profile{}, presence{}, true, nil
	}
	v, diags := evaluate(attr, cty.String, ctx)
	if diags.HasErrors() {
		return &Profile{}, presence{}, false, diags
	}
	if v == cty.NilVal { // profile = null: the body declares everything
		return &Profile{}, presence{}, true, diags
	}
	if lookup == nil {
		return &Profile{}, presence{}, false, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Profile not allowed here",
			Detail:   "A built-in profile declares all of its figures; it cannot start from another profile.",
			Subject:  attr.NameRange.Ptr(),
		})
	}
	base, err := lookup(v.AsString())
	switch {
	case errors.Is(err, errNoSuchProfile):
		return &Profile{}, presence{}, false, append(diags, unknownProfile(v.AsString(), attr))
	case err != nil: // a broken embedded file: a bug here, not the user's
		return &Profile{}, presence{}, false, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Built-in profiles failed to load",
			Detail:   fmt.Sprintf("This is a bug in gpuflow; please report it: %s.", err),
			Subject:  attr.Expr.Range().Ptr(),
		})
	}
	p = base.profile.clone()
	p.BaseProfile = v.AsString()
	return p, base.present.clone(), true, diags
}

func unknownProfile(name string, attr *hcl.Attribute) *hcl.Diagnostic {
	names := BuiltinNames()
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Unknown hardware profile",
		Detail: fmt.Sprintf("There is no built-in hardware profile named %q.%s Built-in profiles: %s.",
			name, didYouMean(name, names), quoteAll(names)),
		Subject: attr.Expr.Range().Ptr(),
	}
}

// assignAll evaluates every argument the body sets and stores it in p.
func assignAll(p *Profile, present presence, decl declaration, ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, a := range arguments {
		attr := decl.attrs[a.path()]
		if attr == nil {
			continue
		}
		v, evalDiags := evaluate(attr, a.typ, ctx)
		diags = append(diags, evalDiags...)
		if v == cty.NilVal && !evalDiags.HasErrors() {
			continue // null: as if not set
		}
		// Set even when invalid: the error above says more than a
		// "Missing required argument" would.
		present[a.path()] = true
		if v == cty.NilVal {
			continue
		}
		if problem := a.set(p, v); problem != "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for " + a.path(),
				Detail:   a.path() + " " + problem,
				Subject:  attr.Expr.Range().Ptr(),
			})
		}
	}
	return diags
}

// evaluate returns attr's value converted to typ, or cty.NilVal when it is
// null or cannot be used (diagnostics then say why, except for null).
func evaluate(attr *hcl.Attribute, typ cty.Type, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	v, diags := attr.Expr.Value(ctx)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	v, _ = v.UnmarkDeep()
	switch {
	case v.IsNull():
		return cty.NilVal, diags
	case !v.IsWhollyKnown():
		return cty.NilVal, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Value not known when planning",
			Detail:   fmt.Sprintf("The value of %s depends on something known only during apply; hardware must be known when the plan is made.", attr.Name),
			Subject:  attr.Expr.Range().Ptr(),
		})
	}
	converted, err := convert.Convert(v, typ)
	if err != nil {
		return cty.NilVal, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: %s.", attr.Name, err),
			Subject:  attr.Expr.Range().Ptr(),
		})
	}
	return converted, diags
}

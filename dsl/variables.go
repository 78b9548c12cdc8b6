package dsl

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// envVarPrefix marks environment variables that set workload variables.
const envVarPrefix = "GPUFLOW_VAR_"

func (c *Config) decodeVariable(b *hcl.Block) hcl.Diagnostics {
	v := &Variable{Name: b.Labels[0], Type: cty.DynamicPseudoType, Default: cty.NilVal, DeclRange: b.DefRange}
	if !hclsyntax.ValidIdentifier(v.Name) {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid variable name",
			Detail: "A variable name must start with a letter or underscore and contain only letters, digits, underscores and dashes.", Subject: b.LabelRanges[0].Ptr()}}
	}
	content, diags := b.Body.Content(variableSchema)
	c.Variables[v.Name] = v
	if attr, ok := content.Attributes["type"]; ok {
		ty, tdiags := typeexpr.TypeConstraint(attr.Expr)
		diags = append(diags, tdiags...)
		if !tdiags.HasErrors() {
			v.Type = ty
		}
	}
	if attr, ok := content.Attributes["description"]; ok {
		diags = append(diags, gohcl.DecodeExpression(attr.Expr, nil, &v.Description)...)
	}
	if attr, ok := content.Attributes["sensitive"]; ok {
		diags = append(diags, gohcl.DecodeExpression(attr.Expr, nil, &v.Sensitive)...)
	}
	if attr, ok := content.Attributes["default"]; ok {
		val, vdiags := attr.Expr.Value(nil)
		diags = append(diags, vdiags...)
		if !vdiags.HasErrors() {
			conv, err := convert.Convert(val, v.Type)
			if err != nil {
				diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid default value for variable",
					Detail: fmt.Sprintf("This default cannot be used for variable %q: %s. Change it to match the type %s.", v.Name, err, typeexpr.TypeString(v.Type)), Subject: attr.Expr.Range().Ptr()})
			} else if rdiags := checkRange(conv, attr.Expr.Range().Ptr()); rdiags.HasErrors() {
				diags = append(diags, rdiags...)
			} else {
				v.Default = conv
			}
		}
	}
	for _, vb := range content.Blocks {
		vc, vdiags := vb.Body.Content(validationSchema)
		diags = append(diags, vdiags...)
		if !vdiags.HasErrors() {
			v.Validations = append(v.Validations, &Validation{Condition: vc.Attributes["condition"].Expr,
				ErrorMessage: vc.Attributes["error_message"].Expr, DeclRange: vb.DefRange})
		}
	}
	return diags
}

// evaluateVariables assigns each variable its value, later sources winning:
// default, GPUFLOW_VAR_ environment, -var-file files, then -var flags.
func (c *Config) evaluateVariables(in Inputs) hcl.Diagnostics {
	for _, v := range c.Variables {
		v.Value, v.ValueSource = v.Default, "default"
	}
	diags := c.applyEnv(in.Environ)
	for _, f := range in.VarFiles {
		diags = append(diags, c.applyVarFile(f)...)
	}
	for _, raw := range in.Vars {
		diags = append(diags, c.applyVarFlag(raw)...)
	}
	if diags.HasErrors() {
		return diags
	}
	for _, name := range slices.Sorted(maps.Keys(c.Variables)) {
		v := c.Variables[name]
		if v.Value == cty.NilVal {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No value for required variable",
				Detail:  fmt.Sprintf("Variable %q has no default. Set it with -var %s=VALUE, a -var-file, or the environment variable %s%s.", name, name, envVarPrefix, name),
				Subject: v.DeclRange.Ptr()})
		}
	}
	if diags.HasErrors() {
		return diags
	}
	return append(diags, c.checkValidations()...)
}

func (c *Config) applyEnv(environ []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, kv := range environ {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envVarPrefix) {
			continue
		}
		v := c.Variables[strings.TrimPrefix(name, envVarPrefix)]
		if v == nil {
			continue // like Terraform: the environment may hold values for other workloads
		}
		diags = append(diags, v.setRaw(raw, "environment variable "+name)...)
	}
	return diags
}

func (c *Config) applyVarFlag(raw string) hcl.Diagnostics {
	name, value, ok := strings.Cut(raw, "=")
	if !ok || name == "" {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid -var option",
			Detail: fmt.Sprintf("The -var option %q is not NAME=VALUE. Write it as -var 'name=value'.", raw)}}
	}
	v := c.Variables[name]
	if v == nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Value for undeclared variable",
			Detail: fmt.Sprintf("The -var option sets %q, but the workload declares no such variable.%s Declare it with a variable block or drop the option.", name, didYouMean(name, slices.Sorted(maps.Keys(c.Variables))))}}
	}
	return v.setRaw(value, "-var")
}

// setRaw sets a value given as text: primitive types, and variables with
// no type, take the text as a string; collection and structural types
// parse it as an HCL expression, as Terraform does.
func (v *Variable) setRaw(raw, source string) hcl.Diagnostics {
	var val cty.Value
	if v.Type.IsPrimitiveType() || v.Type == cty.DynamicPseudoType {
		val = cty.StringVal(raw)
	} else {
		expr, diags := hclsyntax.ParseExpression([]byte(raw), source, hcl.InitialPos)
		if diags.HasErrors() {
			return diags
		}
		var vdiags hcl.Diagnostics
		val, vdiags = expr.Value(nil)
		if vdiags.HasErrors() {
			return vdiags
		}
	}
	return v.set(val, source, nil)
}

func (v *Variable) set(val cty.Value, source string, subject *hcl.Range) hcl.Diagnostics {
	conv, err := convert.Convert(val, v.Type)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid value for variable",
			Detail:  fmt.Sprintf("The value for %q from %s is not valid: %s. It must be of type %s.", v.Name, source, err, typeexpr.TypeString(v.Type)),
			Subject: subject}}
	}
	if diags := checkRange(conv, subject); diags.HasErrors() {
		return diags
	}
	v.Value, v.ValueSource = conv, source
	return nil
}

func (c *Config) applyVarFile(path string) hcl.Diagnostics {
	src, err := os.ReadFile(path)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read variables file",
			Detail: fmt.Sprintf("The -var-file %s cannot be read: %s.", path, unwrapPathError(err))}}
	}
	c.Sources[path] = src
	f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return diags
	}
	attrs, adiags := f.Body.JustAttributes()
	diags = append(diags, adiags...)
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		attr := attrs[name]
		v := c.Variables[name]
		if v == nil {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Value for undeclared variable",
				Detail:  fmt.Sprintf("The file sets %q, but the workload declares no such variable, so the value is ignored.%s", name, didYouMean(name, slices.Sorted(maps.Keys(c.Variables)))),
				Subject: attr.NameRange.Ptr()})
			continue
		}
		val, vdiags := attr.Expr.Value(nil)
		diags = append(diags, vdiags...)
		if !vdiags.HasErrors() {
			diags = append(diags, v.set(val, path, attr.Expr.Range().Ptr())...)
		}
	}
	return diags
}

func (c *Config) checkValidations() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(c.Variables)) {
		v := c.Variables[name]
		ctx := &hcl.EvalContext{
			Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{name: v.Value})},
			Functions: Functions(),
		}
		for _, rule := range v.Validations {
			diags = append(diags, rule.check(v, ctx)...)
		}
	}
	return diags
}

func (r *Validation) check(v *Variable, ctx *hcl.EvalContext) hcl.Diagnostics {
	ok, diags := r.Condition.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	ok, err := convert.Convert(ok, cty.Bool)
	if err != nil || ok.IsNull() || !ok.IsKnown() {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid validation condition",
			Detail: "The condition must be true or false.", Subject: r.Condition.Range().Ptr()}}
	}
	if ok.True() {
		return nil
	}
	var msg string
	diags = gohcl.DecodeExpression(r.ErrorMessage, ctx, &msg)
	if diags.HasErrors() {
		return diags
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid value for variable",
		Detail:  fmt.Sprintf("%s The value of %s came from %s.", strings.TrimSpace(msg), v.Name, describeSource(v.ValueSource)),
		Subject: r.Condition.Range().Ptr()}}
}

// describeSource words a Variable.ValueSource for a message.
func describeSource(source string) string {
	switch {
	case source == "default":
		return "its default"
	case source == "-var":
		return "a -var option"
	case strings.HasPrefix(source, "environment variable "):
		return "the " + source
	}
	return "the file " + source
}

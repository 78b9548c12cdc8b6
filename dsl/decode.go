package dsl

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// decodeArgs decodes body into target, a pointer to a struct whose fields
// are tagged hcl:"NAME,optional" (a *int, *string or *bool) or
// hcl:"NAME,block" (a pointer to such a struct, for at most one block). It
// stands in for gohcl.DecodeBody, whose messages ("Unsuitable value: a
// number is required") name neither the argument nor the value it takes.
// The result maps each argument set to its expression's range, nested ones
// as "BLOCK.NAME" and a nested block itself to its header.
func decodeArgs(body hcl.Body, ctx *hcl.EvalContext, target any) (map[string]hcl.Range, hcl.Diagnostics) {
	schema, _ := gohcl.ImpliedBodySchema(target)
	content, diags := body.Content(schema)
	ranges := map[string]hcl.Range{}
	rv := reflect.ValueOf(target).Elem()
	for i := range rv.NumField() {
		name, kind, _ := strings.Cut(rv.Type().Field(i).Tag.Get("hcl"), ",")
		field := rv.Field(i)
		switch kind {
		case "optional":
			if attr := content.Attributes[name]; attr != nil {
				ranges[name] = attr.Expr.Range()
				diags = append(diags, decodeArg(attr, ctx, field)...)
			}
		case "block":
			diags = append(diags, decodeNested(content.Blocks.OfType(name), ctx, field, ranges)...)
		}
	}
	return ranges, diags
}

func decodeNested(blocks hcl.Blocks, ctx *hcl.EvalContext, field reflect.Value, ranges map[string]hcl.Range) hcl.Diagnostics {
	if len(blocks) == 0 {
		return nil
	}
	b := blocks[0]
	var diags hcl.Diagnostics
	for _, extra := range blocks[1:] {
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Duplicate %s block", b.Type),
			Detail:  fmt.Sprintf("Only one %s block is allowed here; the first is at %s. Merge them into one.", b.Type, b.DefRange),
			Subject: extra.DefRange.Ptr()})
	}
	nested := reflect.New(field.Type().Elem())
	inner, ndiags := decodeArgs(b.Body, ctx, nested.Interface())
	for k, r := range inner {
		ranges[b.Type+"."+k] = r
	}
	ranges[b.Type] = b.DefRange
	field.Set(nested)
	return append(diags, ndiags...)
}

// decodeArg evaluates one argument and stores it in field, a pointer
// field; a null value leaves the field nil.
func decodeArg(attr *hcl.Attribute, ctx *hcl.EvalContext, field reflect.Value) hcl.Diagnostics {
	v, diags := attr.Expr.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return nil
	}
	if !v.IsWhollyKnown() {
		return hcl.Diagnostics{argError(attr, "Value not known when loading",
			fmt.Sprintf("%s depends on a value known only during apply; it must be known when the workload is read.", attr.Name))}
	}
	switch field.Type().Elem().Kind() {
	case reflect.Int:
		n, d := wholeNumber(attr, v)
		if d != nil {
			return hcl.Diagnostics{d}
		}
		field.Set(reflect.ValueOf(&n))
	case reflect.String:
		s, err := convert.Convert(v, cty.String)
		if err != nil {
			return hcl.Diagnostics{typeError(attr, "a string", fmt.Sprintf(`%s = "..."`, attr.Name), v)}
		}
		str := s.AsString()
		field.Set(reflect.ValueOf(&str))
	case reflect.Bool:
		b, err := convert.Convert(v, cty.Bool)
		if err != nil {
			return hcl.Diagnostics{typeError(attr, "true or false", attr.Name+" = true", v)}
		}
		t := b.True()
		field.Set(reflect.ValueOf(&t))
	}
	return nil
}

// wholeNumber converts v to an int that fits in 32 bits, so that products
// of a few such numbers cannot overflow.
func wholeNumber(attr *hcl.Attribute, v cty.Value) (int, *hcl.Diagnostic) {
	num, err := convert.Convert(v, cty.Number)
	if err != nil {
		return 0, typeError(attr, "a whole number", attr.Name+" = 2", v)
	}
	f := num.AsBigFloat()
	if !f.IsInt() {
		return 0, argError(attr, "Invalid value for "+attr.Name,
			fmt.Sprintf("%s must be a whole number, not %s.", attr.Name, f.Text('g', 10)))
	}
	if f.Cmp(big.NewFloat(math.MaxInt32)) > 0 || f.Cmp(big.NewFloat(math.MinInt32)) < 0 {
		return 0, argError(attr, "Invalid value for "+attr.Name,
			fmt.Sprintf("%s = %s is out of range; it must lie between %d and %d.", attr.Name, f.Text('g', 10), math.MinInt32, math.MaxInt32))
	}
	n, _ := f.Int64()
	return int(n), nil
}

func typeError(attr *hcl.Attribute, want, example string, got cty.Value) *hcl.Diagnostic {
	return argError(attr, "Incorrect attribute value type",
		fmt.Sprintf("%s must be %s, like %s, not %s.", attr.Name, want, example, describeValue(got)))
}

func argError(attr *hcl.Attribute, summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: attr.Expr.Range().Ptr()}
}

// describeValue names a value briefly for a message: primitives as
// written, anything else by its type.
func describeValue(v cty.Value) string {
	switch v.Type() {
	case cty.String:
		s := v.AsString()
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return strconv.Quote(s)
	case cty.Bool:
		return strconv.FormatBool(v.True())
	case cty.Number:
		return v.AsBigFloat().Text('g', 10)
	}
	switch t := v.Type(); {
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		return "a list"
	case t.IsMapType() || t.IsObjectType():
		return "an object"
	}
	return "a value of type " + v.Type().FriendlyName()
}

package api

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
)

// DecoderSpec returns the hcldec spec that decodes a body of this schema
// into an object: attributes become AttrSpec, single nested blocks
// BlockSpec, list nested blocks BlockListSpec. A nil schema decodes an
// empty body.
func (b *BlockSchema) DecoderSpec() hcldec.Spec {
	spec := hcldec.ObjectSpec{}
	if b == nil {
		return spec
	}
	for name, a := range b.Attributes {
		spec[name] = &hcldec.AttrSpec{Name: name, Type: a.Type, Required: a.Required}
	}
	for name, nb := range b.Blocks {
		nested := nb.Block.DecoderSpec()
		if nb.Nesting == NestingList {
			spec[name] = &hcldec.BlockListSpec{TypeName: name, Nested: nested, MinItems: nb.MinItems, MaxItems: nb.MaxItems}
			continue
		}
		spec[name] = &hcldec.BlockSpec{TypeName: name, Nested: nested, Required: nb.MinItems > 0}
	}
	return spec
}

// StageDecoderSpec is the spec a stage body decodes with outside the
// engine (a plugin's tests, a standalone tool): the schema's arguments
// plus the meta-arguments the contract takes, as values of any type, which
// is how the engine hands them to the plugin.
func StageDecoderSpec(schema *BlockSchema, contract *StageContract) hcldec.Spec {
	spec := schema.DecoderSpec().(hcldec.ObjectSpec)
	if contract == nil {
		return spec
	}
	for _, m := range contract.MetaArguments {
		spec[m.Name] = &hcldec.AttrSpec{Name: m.Name, Type: cty.DynamicPseudoType, Required: m.Required}
	}
	return spec
}

// ToHCL turns a plugin's diagnostics about a stage body into HCL
// diagnostics whose Subject is the source that each one's Path points at
// (see PathRange). body and spec are the stage body and the spec it was
// decoded with.
func ToHCL(diags Diagnostics, body hcl.Body, spec hcldec.Spec) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		sev := hcl.DiagError
		if d.Severity == Warning {
			sev = hcl.DiagWarning
		}
		subject := PathRange(body, spec, d.Path)
		out = append(out, &hcl.Diagnostic{
			Severity: sev,
			Summary:  d.Summary,
			Detail:   d.Detail,
			Subject:  &subject,
		})
	}
	return out
}

// PathRange returns the source range in body that path points at. It
// follows attribute names through the spec's attributes and nested blocks
// (a list block takes the next step as its index), then element keys
// through list, tuple, map and object expressions written out in the
// source. Where the source goes no deeper (a value computed by a function
// or a reference, an attribute left out) it returns the deepest range it
// reached: the attribute's expression, the nested block's header, or for
// an empty path the start of the body.
func PathRange(body hcl.Body, spec hcldec.Spec, path cty.Path) hcl.Range {
	rng := body.MissingItemRange()
	for len(path) > 0 {
		obj, ok := spec.(hcldec.ObjectSpec)
		if !ok {
			return hcldec.SourceRange(body, spec)
		}
		step, ok := path[0].(cty.GetAttrStep)
		if !ok {
			return rng
		}
		switch child := obj[step.Name].(type) {
		case *hcldec.AttrSpec:
			attr := findAttribute(body, child.Name)
			if attr == nil {
				return rng
			}
			return exprPathRange(attr.Expr, path[1:])
		case *hcldec.BlockSpec:
			block := findBlock(body, child.TypeName, 0)
			if block == nil {
				return rng
			}
			rng, body, spec, path = block.DefRange, block.Body, child.Nested, path[1:]
		case *hcldec.BlockListSpec:
			index, rest := leadingIndex(path[1:])
			block := findBlock(body, child.TypeName, index)
			if block == nil {
				return rng
			}
			rng, body, spec, path = block.DefRange, block.Body, child.Nested, rest
		case nil:
			return rng
		default:
			return hcldec.SourceRange(body, child)
		}
	}
	return rng
}

func findAttribute(body hcl.Body, name string) *hcl.Attribute {
	content, _, _ := body.PartialContent(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: name}},
	})
	return content.Attributes[name]
}

// findBlock returns the index-th nested block of a type, or nil.
func findBlock(body hcl.Body, typeName string, index int) *hcl.Block {
	content, _, _ := body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: typeName}},
	})
	blocks := content.Blocks.OfType(typeName)
	if index < 0 || index >= len(blocks) {
		return nil
	}
	return blocks[index]
}

// leadingIndex takes a whole-number index step off the front of path; a
// path without one means the first block.
func leadingIndex(path cty.Path) (int, cty.Path) {
	if len(path) == 0 {
		return 0, path
	}
	if i, ok := intKey(path[0]); ok {
		return i, path[1:]
	}
	return 0, path
}

// exprPathRange descends into an expression written out as a list, tuple,
// map or object literal, as far as path and the source allow.
func exprPathRange(expr hcl.Expression, path cty.Path) hcl.Range {
	for _, step := range path {
		next := elementExpr(expr, step)
		if next == nil {
			break
		}
		expr = next
	}
	return expr.Range()
}

func elementExpr(expr hcl.Expression, step cty.PathStep) hcl.Expression {
	if i, ok := intKey(step); ok {
		elems, diags := hcl.ExprList(expr)
		if diags.HasErrors() || i < 0 || i >= len(elems) {
			return nil
		}
		return elems[i]
	}
	key, ok := stringKey(step)
	if !ok {
		return nil
	}
	pairs, diags := hcl.ExprMap(expr)
	if diags.HasErrors() {
		return nil
	}
	for _, pair := range pairs {
		k, diags := pair.Key.Value(nil)
		if !diags.HasErrors() && k.Type() == cty.String && k.IsKnown() && !k.IsNull() && k.AsString() == key {
			return pair.Value
		}
	}
	return nil
}

func intKey(step cty.PathStep) (int, bool) {
	index, ok := step.(cty.IndexStep)
	if !ok || index.Key.Type() != cty.Number || !index.Key.IsKnown() || index.Key.IsNull() {
		return 0, false
	}
	i, acc := index.Key.AsBigFloat().Int64()
	return int(i), acc == 0
}

// stringKey is a map key or an object attribute name.
func stringKey(step cty.PathStep) (string, bool) {
	switch step := step.(type) {
	case cty.GetAttrStep:
		return step.Name, true
	case cty.IndexStep:
		if step.Key.Type() == cty.String && step.Key.IsKnown() && !step.Key.IsNull() {
			return step.Key.AsString(), true
		}
	}
	return "", false
}

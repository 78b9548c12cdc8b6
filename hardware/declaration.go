package hardware

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// declaration is what one hardware body sets, flattened by path:
// attributes by argument path ("gpu.tflops.bf16"), blocks by block path.
type declaration struct {
	body   hcl.Body
	attrs  map[string]*hcl.Attribute
	blocks map[string]*hcl.Block
}

// gather reads body against the schema. Unknown arguments and blocks get
// HCL's own diagnostics, with its "Did you mean" suggestions.
func gather(body hcl.Body) (declaration, hcl.Diagnostics) {
	decl := declaration{body: body, attrs: map[string]*hcl.Attribute{}, blocks: map[string]*hcl.Block{}}
	return decl, decl.read(body, blockTop)
}

func (d declaration) read(body hcl.Body, path string) hcl.Diagnostics {
	content, diags := body.Content(schemas[path])
	for name, attr := range content.Attributes {
		d.attrs[joinPath(path, name)] = attr
	}
	for _, b := range content.Blocks {
		bp := joinPath(path, b.Type)
		if first := d.blocks[bp]; first != nil {
			diags = append(diags, duplicateBlock(b, first))
			continue
		}
		d.blocks[bp] = b
		diags = append(diags, d.read(b.Body, bp)...)
	}
	return diags
}

func duplicateBlock(b, first *hcl.Block) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Duplicate %s block", b.Type),
		Detail: fmt.Sprintf("Only one %s block is allowed here; the first was defined at %s. Merge the two.",
			b.Type, first.DefRange),
		Subject: b.DefRange.Ptr(),
	}
}

// rangeOf returns where the first of paths that the body sets is: an
// attribute's value or a block's header. When none is set it falls back to
// the start of the body.
func (d declaration) rangeOf(paths ...string) *hcl.Range {
	for _, p := range paths {
		if attr := d.attrs[p]; attr != nil {
			return attr.Expr.Range().Ptr()
		}
		if b := d.blocks[p]; b != nil {
			return b.DefRange.Ptr()
		}
	}
	r := d.body.MissingItemRange()
	return &r
}

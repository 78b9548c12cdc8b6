package hardware

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// FuzzDecode feeds arbitrary source through parse and Decode: whatever the
// input, Decode must return a profile or errors, never panic, and never
// both a profile and errors.
func FuzzDecode(f *testing.F) {
	for _, name := range BuiltinNames() {
		src, err := profileFiles.ReadFile("profiles/" + name + ".hcl")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(inlineSrc))
	f.Add([]byte(`hardware "x" { profile = "h200-x4" }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, diags := hclsyntax.ParseConfig(src, "fuzz.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			return
		}
		content, _ := file.Body.Content(profileFileSchema)
		for _, b := range content.Blocks {
			p, diags := Decode(b.Labels[0], b.Body, nil)
			if (p == nil) != diags.HasErrors() {
				t.Fatalf("Decode returned profile %v with diagnostics %s", p, diags)
			}
			if p != nil {
				p.Value()
			}
		}
	})
}

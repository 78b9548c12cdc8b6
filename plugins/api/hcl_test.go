package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

const stageSource = `stage "exec" "x" {
  command = ["prog", "arg"]
  env     = { FOO = "1", "BAR" = "2" }
  timeout = "soon"
  args    = upper("x")
  gemm {
    dtypes = ["bf16"]
  }
  check { min = 1 }
  check { min = 2 }
}
`

var testSchema = &BlockSchema{
	Attributes: map[string]*Attribute{
		"command": {Type: cty.List(cty.String), Required: true},
		"env":     {Type: cty.Map(cty.String)},
		"timeout": {Type: cty.String},
		"args":    {Type: cty.String},
		"dir":     {Type: cty.String},
	},
	Blocks: map[string]*NestedBlock{
		"gemm": {Nesting: NestingSingle, Block: BlockSchema{Attributes: map[string]*Attribute{
			"dtypes": {Type: cty.List(cty.String)},
		}}},
		"check": {Nesting: NestingList, Block: BlockSchema{Attributes: map[string]*Attribute{
			"min": {Type: cty.Number},
		}}},
	},
}

// stageBody parses stageSource and returns the stage block's body.
func stageBody(t *testing.T) (hcl.Body, []byte) {
	t.Helper()
	src := []byte(stageSource)
	file, diags := hclsyntax.ParseConfig(src, "main.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	content, diags := file.Body.Content(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "stage", LabelNames: []string{"type", "name"}}},
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return content.Blocks[0].Body, src
}

func TestDecoderSpecDecodesBody(t *testing.T) {
	t.Parallel()
	body, _ := stageBody(t)
	ctx := &hcl.EvalContext{Functions: map[string]function.Function{"upper": stdlib.UpperFunc}}
	got, diags := hcldec.Decode(body, testSchema.DecoderSpec(), ctx)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := cty.ObjectVal(map[string]cty.Value{
		"command": cty.ListVal([]cty.Value{cty.StringVal("prog"), cty.StringVal("arg")}),
		"env":     cty.MapVal(map[string]cty.Value{"FOO": cty.StringVal("1"), "BAR": cty.StringVal("2")}),
		"timeout": cty.StringVal("soon"),
		"args":    cty.StringVal("X"),
		"dir":     cty.NullVal(cty.String),
		"gemm": cty.ObjectVal(map[string]cty.Value{
			"dtypes": cty.ListVal([]cty.Value{cty.StringVal("bf16")}),
		}),
		"check": cty.ListVal([]cty.Value{
			cty.ObjectVal(map[string]cty.Value{"min": cty.NumberIntVal(1)}),
			cty.ObjectVal(map[string]cty.Value{"min": cty.NumberIntVal(2)}),
		}),
	})
	if !got.RawEquals(want) {
		t.Errorf("decoded %#v\nwant %#v", got, want)
	}
}

func TestPathRange(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		path cty.Path
		want string // the source text the range covers
		line int
	}{
		"attribute":            {cty.GetAttrPath("timeout"), `"soon"`, 4},
		"list element":         {cty.GetAttrPath("command").IndexInt(1), `"arg"`, 2},
		"list element too far": {cty.GetAttrPath("command").IndexInt(5), `["prog", "arg"]`, 2},
		"map key bare":         {cty.GetAttrPath("env").IndexString("FOO"), `"1"`, 3},
		"map key quoted":       {cty.GetAttrPath("env").IndexString("BAR"), `"2"`, 3},
		"computed value":       {cty.GetAttrPath("args").IndexInt(0), `upper("x")`, 5},
		"single block attr":    {cty.GetAttrPath("gemm").GetAttr("dtypes").IndexInt(0), `"bf16"`, 7},
		"single block":         {cty.GetAttrPath("gemm"), `gemm`, 6},
		"list block by index":  {cty.GetAttrPath("check").IndexInt(1).GetAttr("min"), `2`, 10},
		"list block no index":  {cty.GetAttrPath("check").GetAttr("min"), `1`, 9},
		"absent attribute":     {cty.GetAttrPath("dir"), `{`, 1},
		"unknown attribute":    {cty.GetAttrPath("nope"), `{`, 1},
	}
	body, src := stageBody(t)
	spec := testSchema.DecoderSpec()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rng := PathRange(body, spec, tc.path)
			got := string(rng.SliceBytes(src))
			if rng.Empty() {
				got = string(src[rng.Start.Byte])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("source (-want +got):\n%s", diff)
			}
			if rng.Start.Line != tc.line || rng.Filename != "main.hcl" {
				t.Errorf("range %s, want line %d of main.hcl", rng, tc.line)
			}
		})
	}
}

func TestToHCL(t *testing.T) {
	t.Parallel()
	body, _ := stageBody(t)
	diags := Diagnostics{
		{Severity: Error, Summary: "Bad timeout", Detail: "Use a duration.", Path: cty.GetAttrPath("timeout")},
		{Severity: Warning, Summary: "Odd command", Path: cty.GetAttrPath("command").IndexInt(0)},
	}
	got := ToHCL(diags, body, testSchema.DecoderSpec())
	type flat struct {
		Severity        hcl.DiagnosticSeverity
		Summary, Detail string
		Line, Column    int
	}
	var flatGot []flat
	for _, d := range got {
		flatGot = append(flatGot, flat{d.Severity, d.Summary, d.Detail, d.Subject.Start.Line, d.Subject.Start.Column})
	}
	want := []flat{
		{hcl.DiagError, "Bad timeout", "Use a duration.", 4, 13},
		{hcl.DiagWarning, "Odd command", "", 2, 14},
	}
	if diff := cmp.Diff(want, flatGot); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

func TestHasCapability(t *testing.T) {
	t.Parallel()
	s := &Schema{Capabilities: []string{CapabilityStop}}
	if !s.HasCapability(CapabilityStop) || s.HasCapability(CapabilityConcurrentApply) {
		t.Errorf("HasCapability wrong for %v", s.Capabilities)
	}
}

package sdk

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

type loraBody struct {
	Rank    int      `cty:"rank"`
	Targets []string `cty:"targets"`
	Unknown Unknowns
}

// size decodes a number of bytes, or a string with the unit "KiB".
type size int64

func (s *size) DecodeCty(v cty.Value) error {
	if v.Type() == cty.String {
		var n int64
		if _, err := fmt.Sscanf(v.AsString(), "%dKiB", &n); err != nil {
			return &ValueError{Summary: "Invalid size", Detail: fmt.Sprintf("%q is not a size like \"4KiB\".", v.AsString())}
		}
		*s = size(n << 10)
		return nil
	}
	if v.Type() != cty.Number {
		return fmt.Errorf("a size is a number or a string")
	}
	n, _ := v.AsBigFloat().Int64()
	*s = size(n)
	return nil
}

type testBody struct {
	Command []string          `cty:"command"`
	Env     map[string]string `cty:"env"`
	Steps   int64             `cty:"steps"`
	LR      float64           `cty:"lr"`
	Merge   bool              `cty:"merge"`
	Sched   string            `cty:"schedule"`
	LoRA    *loraBody         `cty:"lora"`
	MinLR   *float64          `cty:"min_lr"`
	Seed    *big.Float        `cty:"seed"`
	Data    cty.Value         `cty:"data"`
	Size    size              `cty:"size"`
	MaxSize *size             `cty:"max_size"`
	Unknown Unknowns
	ignored string
}

// diagAt is what a test compares of a diagnostic.
type diagAt struct {
	Summary string
	Path    string
}

// diagsAt is each diagnostic's summary and attribute path.
func diagsAt(diags api.Diagnostics) []diagAt {
	var at []diagAt
	for _, d := range diags {
		at = append(at, diagAt{d.Summary, pathText(d.Path, "")})
	}
	return at
}

func TestDecode(t *testing.T) {
	t.Parallel()
	strs := func(s ...string) cty.Value {
		var vs []cty.Value
		for _, x := range s {
			vs = append(vs, cty.StringVal(x))
		}
		return cty.ListVal(vs)
	}
	defaults := func() testBody { return testBody{Sched: "cosine", Steps: 7} }
	for name, tc := range map[string]struct {
		body  map[string]cty.Value
		want  testBody
		diags []diagAt
	}{
		"every kind": {
			body: map[string]cty.Value{"command": strs("make", "test"), "env": cty.MapVal(map[string]cty.Value{"A": cty.StringVal("1")}),
				"steps": cty.NumberIntVal(10), "lr": cty.NumberFloatVal(3e-4), "merge": cty.True, "schedule": cty.StringVal("linear"),
				"lora": cty.ObjectVal(map[string]cty.Value{"rank": cty.NumberIntVal(8), "targets": strs("q_proj")})},
			want: testBody{Command: []string{"make", "test"}, Env: map[string]string{"A": "1"}, Steps: 10, LR: 3e-4, Merge: true,
				Sched: "linear", LoRA: &loraBody{Rank: 8, Targets: []string{"q_proj"}}},
		},
		"null and unknown keep defaults": {
			body: map[string]cty.Value{"steps": cty.UnknownVal(cty.Number), "schedule": cty.NullVal(cty.String)},
			want: testBody{Sched: "cosine", Steps: 7, Unknown: Unknowns{cty.GetAttrPath("steps")}},
		},
		"null, unknown and set pointers": {
			body: map[string]cty.Value{"min_lr": cty.UnknownVal(cty.Number), "seed": cty.NullVal(cty.Number), "max_size": cty.NumberIntVal(3)},
			want: testBody{Sched: "cosine", Steps: 7, MaxSize: ptr(size(3)), Unknown: Unknowns{cty.GetAttrPath("min_lr")}},
		},
		"a list with an unknown element is left as it was": {
			body: map[string]cty.Value{"command": cty.ListVal([]cty.Value{cty.StringVal("echo"), cty.UnknownVal(cty.String)})},
			want: testBody{Sched: "cosine", Steps: 7, Unknown: Unknowns{cty.GetAttrPath("command").IndexInt(1)}},
		},
		"a map with an unknown value is left as it was": {
			body: map[string]cty.Value{"env": cty.MapVal(map[string]cty.Value{"A": cty.StringVal("1"), "B": cty.UnknownVal(cty.String)})},
			want: testBody{Sched: "cosine", Steps: 7, Unknown: Unknowns{cty.GetAttrPath("env").IndexString("B")}},
		},
		"an unknown member of a nested block": {
			body: map[string]cty.Value{"lora": cty.ObjectVal(map[string]cty.Value{"rank": cty.UnknownVal(cty.Number), "targets": strs("q_proj")})},
			want: testBody{Sched: "cosine", Steps: 7, LoRA: &loraBody{Targets: []string{"q_proj"}, Unknown: Unknowns{cty.GetAttrPath("rank")}},
				Unknown: Unknowns{cty.GetAttrPath("lora").GetAttr("rank")}},
		},
		"an unknown nested block": {
			body: map[string]cty.Value{"lora": cty.UnknownVal(cty.Object(map[string]cty.Type{"rank": cty.Number}))},
			want: testBody{Sched: "cosine", Steps: 7, Unknown: Unknowns{cty.GetAttrPath("lora")}},
		},
		"a null nested block": {
			body: map[string]cty.Value{"lora": cty.NullVal(cty.Object(map[string]cty.Type{"rank": cty.Number}))},
			want: defaults(),
		},
		"a value that decodes itself": {
			body: map[string]cty.Value{"size": cty.StringVal("4KiB"), "max_size": cty.NumberIntVal(512)},
			want: testBody{Sched: "cosine", Steps: 7, Size: 4096, MaxSize: ptr(size(512))},
		},
		"a value that does not decode itself names its problem": {
			body:  map[string]cty.Value{"size": cty.StringVal("big"), "max_size": cty.True},
			want:  defaults(),
			diags: []diagAt{{"Invalid size", "size"}, {"Invalid value", "max_size"}},
		},
		"an unknown value that decodes itself": {
			body: map[string]cty.Value{"size": cty.UnknownVal(cty.String)},
			want: testBody{Sched: "cosine", Steps: 7, Unknown: Unknowns{cty.GetAttrPath("size")}},
		},
		"null element": {
			body:  map[string]cty.Value{"command": cty.ListVal([]cty.Value{cty.StringVal("echo"), cty.NullVal(cty.String)})},
			want:  testBody{Command: []string{"echo", ""}, Sched: "cosine", Steps: 7},
			diags: []diagAt{{"Null element", "command[1]"}},
		},
		"fraction into a whole number": {
			body:  map[string]cty.Value{"lora": cty.ObjectVal(map[string]cty.Value{"rank": cty.NumberFloatVal(2.5)})},
			want:  testBody{Sched: "cosine", Steps: 7, LoRA: &loraBody{}},
			diags: []diagAt{{"Not a whole number", "lora.rank"}},
		},
		"map value of the wrong kind": {
			body:  map[string]cty.Value{"env": cty.ObjectVal(map[string]cty.Value{"A": cty.True})},
			want:  testBody{Sched: "cosine", Steps: 7, Env: map[string]string{"A": ""}},
			diags: []diagAt{{"Invalid value", `env["A"]`}},
		},
		"pointer to a number": {
			body: map[string]cty.Value{"min_lr": cty.NumberFloatVal(1e-5)},
			want: testBody{Sched: "cosine", Steps: 7, MinLR: ptr(1e-5)},
		},
		"pointer to a number of the wrong kind": {
			body:  map[string]cty.Value{"min_lr": cty.StringVal("low")},
			want:  defaults(),
			diags: []diagAt{{"Invalid value", "min_lr"}},
		},
		"a number exactly": {
			body: map[string]cty.Value{"seed": cty.MustParseNumberVal("12345678901234567890.5")},
			want: testBody{Sched: "cosine", Steps: 7, Seed: cty.MustParseNumberVal("12345678901234567890.5").AsBigFloat()},
		},
		"any value as it is": {
			body: map[string]cty.Value{"data": strs("a", "b")},
			want: testBody{Sched: "cosine", Steps: 7, Data: strs("a", "b")},
		},
		"string where a number goes": {
			body:  map[string]cty.Value{"steps": cty.StringVal("ten"), "merge": cty.StringVal("yes")},
			want:  defaults(),
			diags: []diagAt{{"Invalid value", "steps"}, {"Invalid value", "merge"}},
		},
		"list where a struct goes": {
			body:  map[string]cty.Value{"lora": strs("x")},
			want:  defaults(),
			diags: []diagAt{{"Invalid value", "lora"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := defaults()
			diags := Decode(cty.ObjectVal(tc.body), &got)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(testBody{}), ctyValues, bigFloats, ctyPaths); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.diags, diagsAt(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// ctyValues compares cty values by equality, the zero value included.
var ctyValues = cmp.Comparer(func(a, b cty.Value) bool {
	if a == cty.NilVal || b == cty.NilVal {
		return a == b
	}
	return a.RawEquals(b)
})

var ctyPaths = cmp.Comparer(func(a, b cty.Path) bool { return a.Equals(b) })

var bigFloats = cmp.Comparer(func(a, b *big.Float) bool { return a == nil && b == nil || a != nil && b != nil && a.Cmp(b) == 0 })

// TestDecodeErrorsPointAtSource decodes HCL source: the host turns a
// decoding error's path into the file, line and column of the element.
func TestDecodeErrorsPointAtSource(t *testing.T) {
	t.Parallel()
	src := "command = [\"echo\", null]\nlora {\n  rank = 2.5\n}\n"
	f, diags := hclsyntax.ParseConfig([]byte(src), "main.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	schema := &api.BlockSchema{
		Attributes: map[string]*api.Attribute{"command": {Type: cty.List(cty.String)}},
		Blocks: map[string]*api.NestedBlock{"lora": {Nesting: api.NestingSingle, Block: api.BlockSchema{
			Attributes: map[string]*api.Attribute{"rank": {Type: cty.Number}}}}},
	}
	spec := schema.DecoderSpec()
	v, diags := hcldec.Decode(f.Body, spec, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var body testBody
	var got []string
	for _, d := range api.ToHCL(Decode(v, &body), f.Body, spec) {
		got = append(got, d.Subject.String()+" "+d.Summary)
	}
	want := []string{"main.hcl:1,20-24 Null element", "main.hcl:3,10-13 Not a whole number"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

func TestDecodeRefusesATargetThatIsNoStruct(t *testing.T) {
	t.Parallel()
	var s string
	if diags := Decode(cty.EmptyObjectVal, &s); !diags.HasErrors() {
		t.Error("decoding into a *string succeeded")
	}
}

// blockBody has a size, a duration and an optional block with defaults.
type blockBody struct {
	MaxBytes int64         `cty:"max_bytes,bytes"`
	Timeout  time.Duration `cty:"timeout,duration"`
	Sweep    *sweep        `cty:"sweep"`
	Unknown  Unknowns
}

type sweep struct {
	Iters  int   `cty:"iters"`
	Bytes  int64 `cty:"bytes,bytes"`
	Expect struct {
		MinGBps float64 `cty:"min_gbps"`
	} `cty:"expect"`
}

func TestDecodeUnitsAndBlockDefaults(t *testing.T) {
	t.Parallel()
	obj := func(m map[string]cty.Value) cty.Value { return cty.ObjectVal(m) }
	defaults := func() blockBody {
		return blockBody{MaxBytes: 1 << 30, Timeout: time.Minute, Sweep: &sweep{Iters: 20, Bytes: 1 << 20}}
	}
	withSweep := func(s sweep) blockBody { b := defaults(); b.Sweep = &s; return b }
	for name, tc := range map[string]struct {
		body  map[string]cty.Value
		want  blockBody
		diags []diagAt
	}{
		"a block left out is nil": {
			body: map[string]cty.Value{},
			want: blockBody{MaxBytes: 1 << 30, Timeout: time.Minute},
		},
		"a block decodes over its defaults": {
			body: map[string]cty.Value{"sweep": obj(map[string]cty.Value{"iters": cty.NumberIntVal(5)})},
			want: withSweep(sweep{Iters: 5, Bytes: 1 << 20}),
		},
		"a nested block with a value": {
			body: map[string]cty.Value{"sweep": obj(map[string]cty.Value{"expect": obj(map[string]cty.Value{"min_gbps": cty.NumberIntVal(300)})})},
			want: withSweep(sweep{Iters: 20, Bytes: 1 << 20, Expect: struct {
				MinGBps float64 `cty:"min_gbps"`
			}{300}}),
		},
		"an unknown block is nil and listed": {
			body: map[string]cty.Value{"sweep": cty.UnknownVal(cty.Object(map[string]cty.Type{"iters": cty.Number}))},
			want: blockBody{MaxBytes: 1 << 30, Timeout: time.Minute, Unknown: Unknowns{cty.GetAttrPath("sweep")}},
		},
		"sizes with units and without": {
			body: map[string]cty.Value{"max_bytes": cty.StringVal("4GiB"), "sweep": obj(map[string]cty.Value{"bytes": cty.NumberIntVal(4096)})},
			want: blockBody{MaxBytes: 4 << 30, Timeout: time.Minute, Sweep: &sweep{Iters: 20, Bytes: 4096}},
		},
		"durations as text and as seconds": {
			body: map[string]cty.Value{"timeout": cty.StringVal("90s")},
			want: blockBody{MaxBytes: 1 << 30, Timeout: 90 * time.Second},
		},
		"a duration in seconds": {
			body: map[string]cty.Value{"timeout": cty.NumberFloatVal(1.5)},
			want: blockBody{MaxBytes: 1 << 30, Timeout: 1500 * time.Millisecond},
		},
		"an unknown size": {
			body: map[string]cty.Value{"max_bytes": cty.UnknownVal(cty.String)},
			want: blockBody{MaxBytes: 1 << 30, Timeout: time.Minute, Unknown: Unknowns{cty.GetAttrPath("max_bytes")}},
		},
		"bad units point at the attribute": {
			body: map[string]cty.Value{"max_bytes": cty.StringVal("4 gigs"), "timeout": cty.StringVal("soon"),
				"sweep": obj(map[string]cty.Value{"bytes": cty.NumberFloatVal(1.5)})},
			want:  blockBody{MaxBytes: 1 << 30, Timeout: time.Minute, Sweep: &sweep{Iters: 20, Bytes: 1 << 20}},
			diags: []diagAt{{"Invalid size", "max_bytes"}, {"Invalid duration", "timeout"}, {"Invalid size", "sweep.bytes"}},
		},
		"a size of the wrong kind": {
			body:  map[string]cty.Value{"max_bytes": cty.True},
			want:  blockBody{MaxBytes: 1 << 30, Timeout: time.Minute},
			diags: []diagAt{{"Invalid size", "max_bytes"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := defaults()
			if _, ok := tc.body["sweep"]; !ok {
				tc.body["sweep"] = cty.NullVal(cty.DynamicPseudoType)
			}
			diags := Decode(cty.ObjectVal(tc.body), &got)
			if diff := cmp.Diff(tc.want, got, ctyPaths); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.diags, diagsAt(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRefusesAUnitOnTheWrongType(t *testing.T) {
	t.Parallel()
	var body struct {
		Size string `cty:"size,bytes"`
	}
	diags := Decode(cty.ObjectVal(map[string]cty.Value{"size": cty.StringVal("1GiB")}), &body)
	if len(diags) != 1 || diags[0].Summary != "Cannot decode the stage body" {
		t.Errorf("diagnostics = %+v, want the plugin's bug reported", diags)
	}
}

func TestDecodeUnknownBody(t *testing.T) {
	t.Parallel()
	body := testBody{Steps: 7}
	if diags := Decode(cty.DynamicVal, &body); len(diags) != 0 {
		t.Fatal(diags)
	}
	if diff := cmp.Diff(testBody{Steps: 7, Unknown: Unknowns{cty.Path{}}}, body, cmp.AllowUnexported(testBody{}), ctyValues, ctyPaths); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if !body.Unknown.Attr("steps") {
		t.Error("an unknown body does not count its attributes unknown")
	}
}

func TestUnknownsHas(t *testing.T) {
	t.Parallel()
	u := Unknowns{cty.GetAttrPath("lora").GetAttr("rank"), cty.GetAttrPath("command").IndexInt(1)}
	for name, tc := range map[string]struct {
		path cty.Path
		want bool
	}{
		"the value itself":         {cty.GetAttrPath("lora").GetAttr("rank"), true},
		"a block holding it":       {cty.GetAttrPath("lora"), true},
		"a list holding it":        {cty.GetAttrPath("command"), true},
		"a known sibling":          {cty.GetAttrPath("lora").GetAttr("alpha"), false},
		"a known element":          {cty.GetAttrPath("command").IndexInt(0), false},
		"below an unknown element": {cty.GetAttrPath("command").IndexInt(1).GetAttr("x"), true},
		"another attribute":        {cty.GetAttrPath("steps"), false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := u.Has(tc.path); got != tc.want {
				t.Errorf("Has(%s) = %v, want %v", api.PathString(tc.path), got, tc.want)
			}
		})
	}
}

package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// TestKnownString checks which values of a contract's file attribute are
// paths to hash: a non-empty known string inside a block that is there.
func TestKnownString(t *testing.T) {
	t.Parallel()
	block := func(v cty.Value) cty.Value {
		return cty.ObjectVal(map[string]cty.Value{"multiple_choice": v})
	}
	path := func(v cty.Value) cty.Value { return block(cty.ObjectVal(map[string]cty.Value{"path": v})) }
	tests := map[string]struct {
		config cty.Value
		want   string
	}{
		"a path":           {path(cty.StringVal("q.jsonl")), "q.jsonl"},
		"an empty path":    {path(cty.StringVal("")), ""},
		"a null path":      {path(cty.NullVal(cty.String)), ""},
		"an unknown path":  {path(cty.UnknownVal(cty.String)), ""},
		"no block":         {block(cty.NullVal(cty.Object(map[string]cty.Type{"path": cty.String}))), ""},
		"no such argument": {cty.ObjectVal(map[string]cty.Value{"weights": cty.StringVal("w")}), ""},
	}
	got, want := map[string]string{}, map[string]string{}
	for name, tc := range tests {
		got[name], _ = knownString(tc.config, attrPath("multiple_choice.path"))
		want[name] = tc.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("knownString (-want +got):\n%s", diff)
	}
}

package plandiff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJSONChanges(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		old, new string
		want     []Change
	}{
		"equal despite indentation and key order": {
			old: "{\n  \"b\": 1,\n  \"a\": [1, 2]\n}", new: `{"a":[1,2],"b":1}`,
		},
		"nested leaf by dotted path": {
			old: `{"tokenizer":{"path":"a.json","type":"hf"}}`, new: `{"tokenizer":{"path":"b.json","type":"hf"}}`,
			want: []Change{{Path: "tokenizer.path", Old: raw(`"a.json"`), New: raw(`"b.json"`)}},
		},
		"arrays compare whole": {
			old: `{"inputs":["a","b"]}`, new: `{"inputs":["a","c"]}`,
			want: []Change{{Path: "inputs", Old: raw(`["a","b"]`), New: raw(`["a","c"]`)}},
		},
		"new document's key order, then removed keys": {
			old: `{"z":1,"tp":2,"gone":true}`, new: `{"tp":4,"z":2,"dp":2}`,
			want: []Change{
				{Path: "tp", Old: raw("2"), New: raw("4")},
				{Path: "z", Old: raw("1"), New: raw("2")},
				{Path: "dp", New: raw("2")},
				{Path: "gone", Old: raw("true")},
			},
		},
		"null is a value, absence is not": {
			old: `{"min_lr":null}`, new: `{"min_lr":6e-5}`,
			want: []Change{{Path: "min_lr", Old: raw("null"), New: raw("6e-5")}},
		},
		"numbers keep their digits": {
			old: `{"bytes":9007199254740993}`, new: `{"bytes":9007199254740992}`,
			want: []Change{{Path: "bytes", Old: raw("9007199254740993"), New: raw("9007199254740992")}},
		},
		"section appears": {
			old: `null`, new: `{"nodes":2,"gpu":{"model":"H100"}}`,
			want: []Change{{Path: "nodes", New: raw("2")}, {Path: "gpu", New: raw(`{"model":"H100"}`)}},
		},
		"scalar documents": {
			old: `"a"`, new: `"b"`,
			want: []Change{{Path: "", Old: raw(`"a"`), New: raw(`"b"`)}},
		},
		"object against list": {
			old: `{"x":{"a":1}}`, new: `{"x":[1]}`,
			want: []Change{{Path: "x", Old: raw(`{"a":1}`), New: raw("[1]")}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, jsonChanges(raw(tc.old), raw(tc.new))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

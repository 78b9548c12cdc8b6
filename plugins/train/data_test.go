package train

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func TestDataPrefixes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"prep/train-00001", "prep/train-00000", "prep/valid-00000", "one/shard", "chat/train_00000", "chat/train_00000.mask"} {
		writeShard(t, filepath.Join(dir, p))
	}
	touch(t, filepath.Join(dir, "lonely.bin"))
	abs := func(p string) string { return filepath.Join(dir, p) }
	strs := func(ss ...string) cty.Value {
		vals := make([]cty.Value, len(ss))
		for i, s := range ss {
			vals[i] = cty.StringVal(s)
		}
		return cty.ListVal(vals)
	}
	tests := map[string]struct {
		data    cty.Value
		want    []string
		wantErr string
	}{
		"a prefix relative to the workload": {data: cty.StringVal("one/shard"), want: []string{abs("one/shard")}},
		"a .bin file":                       {data: cty.StringVal(abs("one/shard.bin")), want: []string{abs("one/shard")}},
		"a folder of shards, sorted":        {data: cty.StringVal("prep"), want: []string{abs("prep/train-00000"), abs("prep/train-00001"), abs("prep/valid-00000")}},
		"a glob":                            {data: cty.StringVal("prep/train-*.bin"), want: []string{abs("prep/train-00000"), abs("prep/train-00001")}},
		"a list":                            {data: strs("one/shard", "prep/valid-00000"), want: []string{abs("one/shard"), abs("prep/valid-00000")}},
		"a data_prep stage's outputs.train": {data: cty.ObjectVal(map[string]cty.Value{"paths": strs(abs("prep/train-00000")), "megatron": strs(abs("prep/train-00000"), abs("prep/train-00001")), "npy": cty.ListValEmpty(cty.String)}), want: []string{abs("prep/train-00000"), abs("prep/train-00001")}},
		"a folder with loss masks":          {data: cty.StringVal("chat"), want: []string{abs("chat/train_00000")}},
		"a shard without its index":         {data: cty.StringVal("lonely"), wantErr: "has no .idx file"},
		"a glob matching nothing":           {data: cty.StringVal("nothing-*"), wantErr: "matches no .bin or .idx shard"},
		"an object without shards":          {data: cty.ObjectVal(map[string]cty.Value{"megatron": cty.ListValEmpty(cty.String), "npy": strs("a.npy")}), wantErr: "no megatron shard paths"},
		"a number":                          {data: cty.NumberIntVal(3), wantErr: "must be a path"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := dataPrefixes(tc.data, dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("prefixes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLossMasks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"a", "a.mask", "b", "c", "c.mask"} {
		writeShard(t, filepath.Join(dir, p))
	}
	touch(t, filepath.Join(dir, "d"+".bin"))
	touch(t, filepath.Join(dir, "d.mask.idx"))
	abs := func(p string) string { return filepath.Join(dir, p) }
	tests := map[string]struct {
		prefixes []string
		want     []string
		wantErr  string
	}{
		"every shard masked": {prefixes: []string{abs("a"), abs("c")}, want: []string{abs("a.mask"), abs("c.mask")}},
		"no shard masked":    {prefixes: []string{abs("b")}},
		"some masked":        {prefixes: []string{abs("a"), abs("b")}, wantErr: "shard " + abs("a") + " has a loss mask beside it and " + abs("b") + " has none"},
		"mask without .bin":  {prefixes: []string{abs("d")}, wantErr: "loss mask " + abs("d.mask") + " has no .bin file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := lossMasks(tc.prefixes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("masks (-want +got):\n%s", diff)
			}
		})
	}
}

package train

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// dataPrefixes turns the data argument into Megatron shard prefixes: a
// data_prep stage's split output (its megatron list), a path or a list of
// paths. A path may name a prefix, a .bin or .idx file, a folder of shards
// or a glob. Relative paths start at workDir; the prefixes are absolute, as
// the trainer runs in the run's folder.
func dataPrefixes(v cty.Value, workDir string) ([]string, error) {
	paths, err := dataPaths(v)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		p, err := api.AbsPath(workDir, p)
		if err != nil {
			return nil, err
		}
		found, err := expandShards(p)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("it names no shards")
	}
	return slices.Compact(out), nil
}

// dataSplit is a data_prep stage's split output, as far as training reads
// it: the shard prefixes, or the paths of what the split holds.
type dataSplit struct {
	Megatron cty.Value `cty:"megatron"`
	Paths    cty.Value `cty:"paths"`
}

// dataPaths reads the paths out of the value's accepted shapes.
func dataPaths(v cty.Value) ([]string, error) {
	switch {
	case v.IsNull() || !v.IsKnown():
		return nil, fmt.Errorf("it has no value")
	case v.Type() == cty.String:
		return []string{v.AsString()}, nil
	case v.Type().IsObjectType() || v.Type().IsMapType():
		var split dataSplit
		sdk.Decode(v, &split) // takes any value: it cannot fail
		for _, p := range []cty.Value{split.Megatron, split.Paths} {
			if p == cty.NilVal {
				continue
			}
			if paths, err := dataPaths(p); err == nil && len(paths) > 0 {
				return paths, nil
			}
		}
		return nil, fmt.Errorf("the object has no megatron shard paths (a data_prep stage writes them with output_format = [\"megatron\"])")
	case v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType():
		var out []string
		for _, e := range v.AsValueSlice() {
			if !e.IsKnown() || e.IsNull() || e.Type() != cty.String {
				return nil, fmt.Errorf("a list of data must hold paths (strings)")
			}
			out = append(out, e.AsString())
		}
		return out, nil
	}
	return nil, fmt.Errorf("it must be a path, a list of paths or a data_prep stage's outputs.train")
}

// expandShards finds the shard prefixes a path names.
func expandShards(p string) ([]string, error) {
	if strings.ContainsAny(p, "*?[") {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", p, err)
		}
		var out []string
		for _, m := range matches {
			prefix := strings.TrimSuffix(strings.TrimSuffix(m, ".bin"), ".idx")
			if prefix != m && !strings.HasSuffix(prefix, maskSuffix) {
				out = append(out, prefix)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s matches no .bin or .idx shard", p)
		}
		return checkShards(slices.Compact(sortedCopy(out)))
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return expandShards(filepath.Join(p, "*.idx"))
	}
	return checkShards([]string{strings.TrimSuffix(strings.TrimSuffix(p, ".bin"), ".idx")})
}

// maskSuffix ends the prefix of a shard's loss mask, PREFIX.mask beside
// PREFIX, as data_prep writes it for chat records.
const maskSuffix = ".mask"

// lossMasks finds the loss mask beside each shard: all of them, or none
// when no shard has one.
func lossMasks(prefixes []string) ([]string, error) {
	var with, without []string
	for _, p := range prefixes {
		if _, err := os.Stat(p + maskSuffix + ".idx"); err != nil {
			without = append(without, p)
			continue
		}
		if _, err := os.Stat(p + maskSuffix + ".bin"); err != nil {
			return nil, fmt.Errorf("loss mask %s%s has no .bin file", p, maskSuffix)
		}
		with = append(with, p+maskSuffix)
	}
	if len(with) > 0 && len(without) > 0 {
		return nil, fmt.Errorf("shard %s has a loss mask beside it and %s has none; train on data prepared the same way, or remove the masks to train on every token", strings.TrimSuffix(with[0], maskSuffix), without[0])
	}
	return with, nil
}

// checkShards makes sure each prefix has both of its files.
func checkShards(prefixes []string) ([]string, error) {
	for _, p := range prefixes {
		for _, ext := range []string{".bin", ".idx"} {
			if _, err := os.Stat(p + ext); err != nil {
				return nil, fmt.Errorf("shard %s has no %s file", p, ext)
			}
		}
	}
	return prefixes, nil
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

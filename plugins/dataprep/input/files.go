package input

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Expand resolves input patterns, relative to dir unless absolute, into the
// ordered list of files to read: patterns in the order given, the matches of
// a glob sorted by name, each file once. A folder holding a Hugging Face
// hub snapshot stands for the Parquet files of split under its data/
// folder; any other folder, and a pattern that matches no file, is an
// error.
func Expand(dir string, patterns []string, split string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("no inputs given")
	}
	var files []string
	seen := make(map[string]bool)
	for k, p := range patterns {
		full := p
		if !filepath.IsAbs(full) {
			full = filepath.Join(dir, p)
		}
		matches, err := match(full)
		if err != nil {
			return nil, fmt.Errorf("inputs[%d] %q: %w", k, p, err)
		}
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, fmt.Errorf("inputs[%d] %q: %w", k, p, err)
			}
			found := []string{m}
			if st.IsDir() {
				if found, err = snapshotFiles(m, split); err != nil {
					return nil, fmt.Errorf("inputs[%d] %q: %w", k, p, err)
				}
			}
			for _, f := range found {
				if !seen[f] {
					seen[f] = true
					files = append(files, f)
				}
			}
		}
	}
	return files, nil
}

func match(pattern string) ([]string, error) {
	if !strings.ContainsAny(pattern, `*?[\`) {
		if _, err := os.Stat(pattern); err != nil {
			return nil, fmt.Errorf("no such file")
		}
		return []string{pattern}, nil
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("bad pattern: %w", err)
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("matches no file")
	}
	slices.Sort(matches)
	return matches, nil
}

// snapshotFiles lists the Parquet files of split in a Hugging Face hub
// snapshot folder: those under data/ named SPLIT-*.parquet (the hub's
// data/train-00000-of-00004.parquet) or lying in a folder named SPLIT
// (data/train/0000.parquet), sorted.
func snapshotFiles(folder, split string) ([]string, error) {
	data := filepath.Join(folder, "data")
	if st, err := os.Stat(data); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, and not a Hugging Face dataset snapshot (it has no data/ folder); name its files, e.g. %q", folder, filepath.Join(folder, "*.jsonl"))
	}
	var files []string
	splits := make(map[string]bool)
	err := filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		name, parent := filepath.Base(path), filepath.Base(filepath.Dir(path))
		if strings.HasPrefix(name, split+"-") || strings.HasPrefix(name, split+".") || parent == split {
			files = append(files, path)
		}
		if s, _, ok := strings.Cut(name, "-"); ok {
			splits[s] = true
		} else if parent != "data" {
			splits[parent] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("the dataset snapshot %s has no Parquet files of split %q under data/; it has %s", folder, split, strings.Join(slices.Sorted(maps.Keys(splits)), ", "))
	}
	slices.Sort(files)
	return files, nil
}

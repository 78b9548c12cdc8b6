package input

import (
	"encoding/json"
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
// dataset stands for the files of split: the Parquet files under a hub
// snapshot's data/ folder, or the Arrow files a save_to_disk folder's
// state.json lists. Any other folder, and a pattern that matches no file,
// is an error.
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
				if found, err = datasetFiles(m, split); err != nil {
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

// datasetFiles lists the files of split in a folder holding a Hugging Face
// dataset: one save_to_disk wrote (a Dataset, or a DatasetDict of split
// folders), or a hub snapshot.
func datasetFiles(folder, split string) ([]string, error) {
	if exists(filepath.Join(folder, "state.json")) {
		return savedFiles(folder)
	}
	if exists(filepath.Join(folder, "dataset_dict.json")) {
		sub := filepath.Join(folder, split)
		if !exists(filepath.Join(sub, "state.json")) {
			return nil, fmt.Errorf("the saved dataset %s has no split %q (no %s)", folder, split, filepath.Join(sub, "state.json"))
		}
		return savedFiles(sub)
	}
	return snapshotFiles(folder, split)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// savedFiles lists the Arrow files of a save_to_disk Dataset folder, in
// the order its state.json gives.
func savedFiles(folder string) ([]string, error) {
	path := filepath.Join(folder, "state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var state struct {
		DataFiles []struct {
			Filename string `json:"filename"`
		} `json:"_data_files"`
	}
	if err := json.Unmarshal(data, &state); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(state.DataFiles) == 0 {
		return nil, fmt.Errorf("%s lists no data files (_data_files)", path)
	}
	var files []string
	for _, f := range state.DataFiles {
		if f.Filename == "" || filepath.Base(f.Filename) != f.Filename {
			return nil, fmt.Errorf("%s: data file %q is not a file name", path, f.Filename)
		}
		files = append(files, filepath.Join(folder, f.Filename))
	}
	return files, nil
}

// snapshotFiles lists the Parquet files of split in a Hugging Face hub
// snapshot folder: those under data/ named SPLIT-*.parquet (the hub's
// data/train-00000-of-00004.parquet) or lying in a folder named SPLIT
// (data/train/0000.parquet), sorted.
func snapshotFiles(folder, split string) ([]string, error) {
	data := filepath.Join(folder, "data")
	if st, err := os.Stat(data); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, and not a Hugging Face dataset (no data/ folder, state.json or dataset_dict.json); name its files, e.g. %q", folder, filepath.Join(folder, "*.jsonl"))
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

package input

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Expand resolves input patterns, relative to dir unless absolute, into the
// ordered list of files to read: patterns in the order given, the matches of
// a glob sorted by name, each file once. A pattern that matches no file is
// an error, and so is a folder.
func Expand(dir string, patterns []string) ([]string, error) {
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
			if st.IsDir() {
				return nil, fmt.Errorf("inputs[%d] %q: %s is a folder; name its files, e.g. %q", k, p, m, filepath.Join(p, "*.jsonl"))
			}
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
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

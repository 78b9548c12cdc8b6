package api

import "path/filepath"

// AbsPath is path made absolute: a relative path starts at dir (a
// request's WorkDir or RunDir), and a relative dir at the current folder.
// Every path a stage outputs is absolute, so that a stage reading it
// never resolves it a second time against its own folder or the folder
// its process runs in.
func AbsPath(dir, path string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return filepath.Abs(path)
}

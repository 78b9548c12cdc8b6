package train

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

// trainerFiles is the Python trainer, shipped inside the binary and
// written into each run's folder, so a run records exactly the code that
// trained it. Its tests (trainer/tests) stay out.
//
//go:embed trainer/*.py trainer/rules.json trainer/models/*.py trainer/models/*/*.py
var trainerFiles embed.FS

// Entry points within the trainer folder.
const (
	trainerScript   = "train.py"
	preflightScript = "preflight.py"
)

// writeTrainer writes the trainer into dir and returns its entry point.
func writeTrainer(dir string) (string, error) {
	root, err := fs.Sub(trainerFiles, "trainer")
	if err != nil {
		return "", err
	}
	err = fs.WalkDir(root, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := fs.ReadFile(root, path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, trainerScript), nil
}

package train

import (
	"embed"
	"os"
	"path/filepath"
)

// trainerFiles is the Python trainer, shipped inside the binary and
// written into each run's folder, so a run records exactly the code that
// trained it. Its tests (trainer/tests) stay out.
//
//go:embed trainer/*.py
var trainerFiles embed.FS

// Entry points within the trainer folder.
const (
	trainerScript   = "train.py"
	preflightScript = "preflight.py"
)

// writeTrainer writes the trainer into dir and returns its entry point.
func writeTrainer(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	entries, err := trainerFiles.ReadDir("trainer")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := trainerFiles.ReadFile("trainer/" + e.Name())
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, trainerScript), nil
}

package fake

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// Package is the import path of the fake plugin's main package.
const Package = "github.com/gpuflow/gpuflow/plugins/fake/cmd/gpuflow-plugin-fake"

// Build compiles the fake plugin into dir as gpuflow-plugin-fake and
// returns its path, for tests that need a real plugin process. It runs the
// go command, so it needs the module's source (any test in it has that).
func Build(dir string) (string, error) {
	out := filepath.Join(dir, "gpuflow-plugin-fake")
	cmd := exec.Command("go", "build", "-o", out, Package)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the fake plugin: %v\n%s", err, msg)
	}
	return out, nil
}

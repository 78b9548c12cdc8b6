package train

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteTrainer writes the whole trainer, its model families' packages
// (whose __init__.py an embedded folder would leave out) included.
func TestWriteTrainer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, err := writeTrainer(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{script, "hf.py", "models/__init__.py", "models/llama/__init__.py", "models/llama/state_dict_adapter.py",
		"models/qwen2/__init__.py", "models/mistral/__init__.py"} {
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tests")); err == nil {
		t.Error("the trainer's tests were written into the run")
	}
}

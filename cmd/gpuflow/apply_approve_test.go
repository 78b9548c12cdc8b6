package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyAsksOnATerminal answers the approval question without a real
// terminal: anything but "yes" runs nothing and writes no state. (A "yes"
// would start plugin processes, which re-execute this test binary, so the
// testscripts and TestApplyKilledThenResumed cover running with the real
// binary instead.)
func TestApplyAsksOnATerminal(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{"no\n", "", "YES\n"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "w.hcl")
		if err := os.WriteFile(path, []byte("stage \"exec\" \"a\" {\n  command = [\"true\"]\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		env := &cliEnv{stdin: strings.NewReader(answer), stdout: &out, stderr: &errOut, isTerminal: true, environ: []string{"NO_COLOR=1"}}
		statePath := filepath.Join(dir, "state.json")
		if code := run([]string{"apply", "-state", statePath, path}, env); code != 1 {
			t.Errorf("answer %q: exit %d, want 1", answer, code)
		}
		for _, want := range []string{"+ stage.exec.a", "Run these stages? Only 'yes' will be accepted."} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("answer %q: stdout lacks %q:\n%s", answer, want, out.String())
			}
		}
		if !strings.Contains(errOut.String(), "apply cancelled") {
			t.Errorf("answer %q: stderr %q", answer, errOut.String())
		}
		if _, err := os.Stat(statePath); !os.IsNotExist(err) {
			t.Errorf("answer %q: state written (%v)", answer, err)
		}
	}
}

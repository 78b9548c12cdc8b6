package api

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestArtifactAt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("file.txt", "hello")
	write("ckpt/.metadata", "0123456789")
	write("ckpt/shard/__0_0.distcp", "abc")
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		path string
		want Artifact
	}{
		"a file":          {"file.txt", Artifact{Name: "a", Bytes: 5}},
		"a folder":        {"ckpt", Artifact{Name: "a", Bytes: 13, Files: 2}},
		"an empty folder": {"empty", Artifact{Name: "a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := ArtifactAt("a", filepath.Join(dir, tc.path))
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Path = filepath.Join(dir, tc.path)
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("ArtifactAt (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ArtifactAt("a", filepath.Join(dir, "missing")); err == nil {
		t.Error("ArtifactAt of a missing path: no error")
	}
}

package client_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/client"
)

func TestSearchDirs(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		client.PathEnv: "/p1::/p2",
		"PATH":         "/usr/bin:/bin",
	}
	got := client.SearchDirs("/srv/job", "/opt/gpuflow/bin/gpuflow", func(k string) string { return env[k] })
	want := []string{"/p1", "/p2", "/srv/job/.gpuflow/plugins", "/opt/gpuflow/bin", "/usr/bin", "/bin"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("search dirs (-want +got):\n%s", diff)
	}
}

func TestDiscoverOrder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := func(name string) string { return filepath.Join(root, name) }
	files := map[string]os.FileMode{
		"env1/gpuflow-plugin-d":                  0o644, // not executable: skipped
		"env2/gpuflow-plugin-a":                  0o755,
		"work/.gpuflow/plugins/gpuflow-plugin-b": 0o755,
		"work/.gpuflow/plugins/gpuflow-plugin-a": 0o755,
		"bin/gpuflow-plugin-b":                   0o755,
		"bin/gpuflow-plugin-":                    0o755, // no name: skipped
		"bin/other-tool":                         0o755,
		"path/gpuflow-plugin-a":                  0o755,
		"path/gpuflow-plugin-c.exe":              0o755,
	}
	for name, mode := range files {
		path := dir(name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir("path/gpuflow-plugin-e"), 0o755); err != nil { // a directory: skipped
		t.Fatal(err)
	}
	env := map[string]string{
		client.PathEnv: dir("env1") + ":" + dir("env2") + ":" + dir("missing"),
		"PATH":         dir("path"),
	}
	dirs := client.SearchDirs(dir("work"), dir("bin/gpuflow"), func(k string) string { return env[k] })
	got := client.Discover(dirs)
	want := []client.Source{
		{Name: "a", Path: dir("env2/gpuflow-plugin-a")},
		{Name: "a", Path: dir("work/.gpuflow/plugins/gpuflow-plugin-a"), Shadowed: true},
		{Name: "b", Path: dir("work/.gpuflow/plugins/gpuflow-plugin-b")},
		{Name: "b", Path: dir("bin/gpuflow-plugin-b"), Shadowed: true},
		{Name: "a", Path: dir("path/gpuflow-plugin-a"), Shadowed: true},
		{Name: "c", Path: dir("path/gpuflow-plugin-c.exe")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovered (-want +got):\n%s", diff)
	}
}

package client

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ExecutablePrefix starts the file name of every external plugin.
const ExecutablePrefix = "gpuflow-plugin-"

// PathEnv is the environment variable holding extra plugin directories,
// separated by colons, searched before all others.
const PathEnv = "GPUFLOW_PLUGIN_PATH"

// Source says where a plugin comes from and how to start it.
type Source struct {
	Name string
	// Path is the executable; for a built-in plugin, the gpuflow binary.
	Path string
	// Args follow Path on the command line.
	Args    []string
	Builtin bool
	// Shadowed is set on a plugin that is never used because one of the
	// same name comes first (a built-in, or one earlier on the search path).
	Shadowed bool
}

// SearchDirs returns the directories searched for external plugins, in
// order: each entry of $GPUFLOW_PLUGIN_PATH, then workDir/.gpuflow/plugins,
// then the directory holding executable (the gpuflow binary), then each
// entry of $PATH. getenv is os.Getenv outside tests.
func SearchDirs(workDir, executable string, getenv func(string) string) []string {
	var dirs []string
	dirs = append(dirs, filepath.SplitList(getenv(PathEnv))...)
	dirs = append(dirs, filepath.Join(workDir, ".gpuflow", "plugins"))
	if executable != "" {
		dirs = append(dirs, filepath.Dir(executable))
	}
	dirs = append(dirs, filepath.SplitList(getenv("PATH"))...)
	return slices.DeleteFunc(dirs, func(d string) bool { return d == "" })
}

// Discover lists the external plugins in dirs. The first executable of a
// name wins; later ones of the same name are returned too, marked
// Shadowed, so that a listing can show them. Unreadable directories are
// skipped: a stale $PATH entry is not an error.
func Discover(dirs []string) []Source {
	var found []Source
	seen := map[string]bool{}
	for _, dir := range dirs {
		for _, src := range discoverDir(dir) {
			src.Shadowed = seen[src.Name]
			seen[src.Name] = true
			found = append(found, src)
		}
	}
	return found
}

// discoverDir lists the plugin executables in one directory, by name.
func discoverDir(dir string) []Source {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var found []Source
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), ExecutablePrefix)
		if !ok || name == "" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !isExecutable(path) {
			continue
		}
		found = append(found, Source{Name: strings.TrimSuffix(name, ".exe"), Path: path})
	}
	return found
}

// isExecutable follows symbolic links, as the shell does.
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpuflow/gpuflow/engine"
)

// runInit prepares .gpuflow/ and checks that every plugin answers.
func runInit(env *cliEnv, args []string) int {
	fs := newFlagSet("init", env, "")
	if !parseFlags(fs, args) {
		return 1
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(env.stderr, "gpuflow init: takes no arguments")
		return 1
	}
	for _, dir := range []string{filepath.Join(engine.DataDir, "state"), filepath.Join(engine.DataDir, "runs"), filepath.Join(engine.DataDir, "plugins")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintf(env.stderr, "Error: creating %s: %s\n", dir, err)
			return 1
		}
	}
	ctx := context.Background()
	plugins, err := loadPlugins(ctx)
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	defer plugins.Close()
	fmt.Fprintf(env.stdout, "Initialized %s/ with plugins for stage types: %v\n", engine.DataDir, plugins.StageTypes(ctx))
	return 0
}

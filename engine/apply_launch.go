package engine

import (
	"context"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Launcher starts a fresh plugin process for each stage run, so that a
// crash, a hang or a kill ends that one stage and nothing else.
type Launcher interface {
	// Launch starts a new process of the plugin p and connects to it.
	Launch(ctx context.Context, p *Plugin) (PluginProcess, error)
}

// PluginProcess is one running plugin process serving one stage run.
type PluginProcess interface {
	// Provider speaks to the process.
	Provider() api.Provider
	// Exited reports whether the process has ended (crashed or exited) on
	// its own or by Kill.
	Exited() bool
	// StderrTail returns the last lines the process wrote to stderr, oldest
	// first, to explain a crash.
	StderrTail() []string
	// Kill ends the process at once; calling it again, or after the
	// process ended, does nothing.
	Kill()
}

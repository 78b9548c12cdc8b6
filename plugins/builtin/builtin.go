package builtin

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/exec"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// constructors maps each built-in plugin's name to its constructor.
var constructors = map[string]func() api.Provider{
	exec.Name: func() api.Provider { return exec.New(exec.Options{}) },
}

// Names returns the built-in plugin names, sorted: client.Options.Builtins.
func Names() []string {
	return slices.Sorted(maps.Keys(constructors))
}

// New returns a fresh provider of the named built-in plugin, in this
// process.
func New(name string) (api.Provider, bool) {
	c, ok := constructors[name]
	if !ok {
		return nil, false
	}
	return c(), true
}

// Serve serves the named built-in plugin until the host closes it, and
// returns the process exit status. gpuflow's main calls it for
// `gpuflow internal-plugin NAME`.
func Serve(name string) int {
	p, ok := New(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "gpuflow internal-plugin: no built-in plugin named %q; the built-ins are %s\n",
			name, strings.Join(Names(), ", "))
		return 2
	}
	sdk.Serve(p)
	return 0
}

package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/gpuflow/gpuflow/plugins/builtin"
	"github.com/gpuflow/gpuflow/plugins/client"
)

func init() {
	registerCommand("plugins", command{"List the plugins found, their versions and stage types", runPlugins})
}

// pluginJSON is one entry of plugins -json.
type pluginJSON struct {
	Name         string   `json:"name"`
	Version      string   `json:"version,omitempty"`
	StageTypes   []string `json:"stage_types"`
	Capabilities []string `json:"capabilities,omitempty"`
	Builtin      bool     `json:"builtin"`
	Path         string   `json:"path,omitempty"`
	Shadowed     bool     `json:"shadowed,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// runPlugins starts every plugin found once to ask for its schema. It
// exits 1 when any usable plugin fails to answer.
func runPlugins(env *cliEnv, args []string) int {
	var asJSON bool
	fs := newFlagSet("plugins", env, "")
	fs.BoolVar(&asJSON, "json", false, "Print JSON")
	if !parseFlags(fs, args) {
		return 1
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(env.stderr, "gpuflow plugins: takes no arguments")
		return 1
	}
	m, err := client.NewManager(client.Options{Builtins: builtin.Names()})
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	defer m.Close()
	list := pluginList(m.List(context.Background()))
	status := 0
	for _, p := range list {
		if p.Error != "" {
			status = 1
		}
	}
	if asJSON {
		writeJSON(env, list)
		return status
	}
	writePluginsHuman(env, list)
	return status
}

func pluginList(infos []client.Info) []pluginJSON {
	out := []pluginJSON{}
	for _, info := range infos {
		p := pluginJSON{Name: info.Name, Version: info.Version, StageTypes: info.StageTypes, Capabilities: info.Capabilities,
			Builtin: info.Builtin, Shadowed: info.Shadowed}
		if p.StageTypes == nil {
			p.StageTypes = []string{}
		}
		if !info.Builtin {
			p.Path = info.Path
		}
		if info.Err != nil {
			p.Error = info.Err.Error()
		}
		out = append(out, p)
	}
	return out
}

func writePluginsHuman(env *cliEnv, list []pluginJSON) {
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSTAGE TYPES\tSOURCE")
	for _, p := range list {
		source := "built-in"
		if !p.Builtin {
			source = p.Path
		}
		version, types := p.Version, strings.Join(p.StageTypes, ", ")
		switch {
		case p.Shadowed:
			version, types, source = "-", "-", source+" (shadowed: an earlier plugin has this name)"
		case p.Error != "":
			version, types = "-", "error (below)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, version, types, source)
	}
	tw.Flush()
	for _, p := range list {
		if p.Error != "" {
			fmt.Fprintf(env.stdout, "\nplugin %s: %s\n", p.Name, p.Error)
		}
	}
}

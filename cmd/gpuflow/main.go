package main

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/gpuflow/gpuflow/plugins/builtin"
	"github.com/gpuflow/gpuflow/plugins/client"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// command is one verb of the CLI.
type command struct {
	synopsis string
	run      func(env *cliEnv, args []string) int
}

// commands holds every verb; files register theirs with registerCommand
// from an init function.
var commands = map[string]command{}

func registerCommand(name string, c command) { commands[name] = c }

func init() {
	registerCommand("init", command{"Prepare the working directory (.gpuflow/) and check plugins", runInit})
	registerCommand("validate", command{"Check a workload for errors without planning", runValidate})
	registerCommand("fmt", command{"Rewrite workload files in canonical format", runFmt})
	registerCommand("plan", command{"Show what apply would do", runPlan})
	registerCommand("show", command{"Show a saved plan", runShow})
	registerCommand("graph", command{"Print the stage graph as DOT or Mermaid", runGraph})
	registerCommand("hardware", command{"List or show built-in hardware profiles", runHardware})
	registerCommand("version", command{"Print the gpuflow version", runVersion})
	registerCommand(client.BuiltinCommand, command{"", runInternalPlugin})
}

// runInternalPlugin serves a built-in plugin: the host re-executes gpuflow
// as `gpuflow internal-plugin NAME` so every stage runs in its own process.
func runInternalPlugin(env *cliEnv, args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(env.stderr, "usage: gpuflow %s NAME (started by gpuflow itself, not by people)\n", client.BuiltinCommand)
		return 1
	}
	return builtin.Serve(args[0])
}

// cliEnv is what a verb may touch: its streams, environment and working
// directory. Tests substitute all of them.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
	// isTerminal reports whether stdout is a terminal (for colour and prompts).
	isTerminal bool
}

func main() {
	os.Exit(run(os.Args[1:], defaultEnv()))
}

func run(args []string, env *cliEnv) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(env.stdout)
		if len(args) == 0 {
			return 1
		}
		return 0
	}
	if args[0] == "-version" || args[0] == "--version" {
		return runVersion(env, nil)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "gpuflow: unknown command %q\n\n", args[0])
		usage(env.stderr)
		return 1
	}
	return cmd.run(env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: gpuflow <command> [options] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		if n != client.BuiltinCommand {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].synopsis)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run gpuflow <command> -h for a command's options.")
}

func runVersion(env *cliEnv, args []string) int {
	fs := newFlagSet("version", env, "")
	if !parseFlags(fs, args) {
		return 1
	}
	fmt.Fprintf(env.stdout, "gpuflow %s\n", version)
	return 0
}

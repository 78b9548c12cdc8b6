package main

import (
	"flag"
	"fmt"
	"strings"
)

// commonFlags are the options every verb takes, so a script can pass them
// to any verb.
type commonFlags struct {
	noColor bool
}

// flagSet is one verb's options: the common ones, registered when the set
// is made so no verb can leave them out, and the verb's own.
type flagSet struct {
	*flag.FlagSet
	common commonFlags
}

// newFlagSet returns a flag set that holds the common flags and reports
// errors instead of exiting.
func newFlagSet(name string, env *cliEnv, argsUsage string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: gpuflow %s [options] %s\n\nOptions:\n", name, argsUsage)
		fs.PrintDefaults()
	}
	fs.BoolVar(&fs.common.noColor, "no-color", false, "Never colour the output")
	return fs
}

// colour says whether this verb's human output is coloured.
func (fs *flagSet) colour(env *cliEnv) bool { return env.useColor(fs.common.noColor) }

// parseFlags parses args; on a bad flag (or -h) the flag package has
// already printed the error and usage, and the caller exits 1.
func parseFlags(fs *flagSet, args []string) bool {
	return fs.Parse(args) == nil
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// varFlags are the variable options plan, validate and apply share.
type varFlags struct {
	vars     listFlag
	varFiles listFlag
}

func (v *varFlags) register(fs *flag.FlagSet) {
	fs.Var(&v.vars, "var", "Set a variable: -var 'NAME=VALUE' (repeatable)")
	fs.Var(&v.varFiles, "var-file", "Read variable values from an HCL file (repeatable)")
}

// workloadPaths takes the PATH arguments, each a workload of its own,
// defaulting to the current directory.
func workloadPaths(fs *flagSet) []string {
	if fs.NArg() == 0 {
		return []string{"."}
	}
	return fs.Args()
}

// onePath takes the single PATH argument, defaulting to the current
// directory.
func onePath(fs *flagSet, env *cliEnv) (string, bool) {
	switch fs.NArg() {
	case 0:
		return ".", true
	case 1:
		return fs.Arg(0), true
	}
	fmt.Fprintf(env.stderr, "gpuflow %s: expected one PATH, got %d: %s\n", fs.Name(), fs.NArg(), strings.Join(fs.Args(), " "))
	fs.Usage()
	return "", false
}

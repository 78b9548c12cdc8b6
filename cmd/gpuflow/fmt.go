package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// exitFmtCheck is fmt -check's status when a file is not canonical; 3, as
// Terraform uses, so scripts can tell it from an error (1).
const exitFmtCheck = 3

type fmtArgs struct {
	check, diff, write bool
	paths              []string
}

func runFmt(env *cliEnv, args []string) int {
	var a fmtArgs
	fs := newFlagSet("fmt", env, "[PATH...]")
	fs.BoolVar(&a.check, "check", false, "Only check; exit 3 if any file is not in canonical form")
	fs.BoolVar(&a.diff, "diff", false, "Print the changes as a unified diff")
	if !parseFlags(fs, args) {
		return 1
	}
	a.paths = fs.Args()
	if len(a.paths) == 0 {
		a.paths = []string{"."}
	}
	a.write = !a.check
	files, err := fmtFiles(a.paths)
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	status := 0
	for _, f := range files {
		st := fmtOne(env, f, a)
		status = max(status, st)
	}
	return status
}

// fmtFiles expands directories to the .hcl files directly inside them.
func fmtFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v; pass .hcl files or directories", p, unwrapPathErr(err))
		}
		if !info.IsDir() {
			out = append(out, p)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(p, "*.hcl"))
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// fmtOne formats one file, returning its exit status contribution.
func fmtOne(env *cliEnv, path string, a fmtArgs) int {
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: cannot read %s: %v\n", path, unwrapPathErr(err))
		return 1
	}
	// hclwrite formats tokens without judging them, so parse first: a file
	// with syntax errors is reported, never rewritten.
	if _, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos); diags.HasErrors() {
		writeDiagnostics(env.stderr, diags, map[string][]byte{path: src}, false)
		return 1
	}
	out := hclwrite.Format(src)
	if bytes.Equal(src, out) {
		return 0
	}
	fmt.Fprintln(env.stdout, path)
	if a.diff {
		fmt.Fprint(env.stdout, udiff.Unified("old/"+path, "new/"+path, string(src), string(out)))
	}
	if !a.write {
		return exitFmtCheck
	}
	if err := state.WriteFileAtomic(path, out); err != nil {
		fmt.Fprintf(env.stderr, "Error: writing %s: %v\n", path, err)
		return 1
	}
	return 0
}

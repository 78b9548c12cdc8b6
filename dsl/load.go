package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// Inputs are the values a user passes for a workload's variables.
type Inputs struct {
	// Vars are NAME=VALUE strings from -var flags, in command-line order.
	Vars []string
	// VarFiles are paths given with -var-file, in command-line order.
	VarFiles []string
	// Environ is the process environment; GPUFLOW_VAR_NAME sets NAME.
	Environ []string
}

// Load reads the workload at path (a .hcl file or a directory of them) and
// evaluates its variables and locals. The returned Config is usable for
// rendering diagnostics even when they contain errors.
func Load(path string, in Inputs) (*Config, hcl.Diagnostics) {
	cfg := newConfig()
	files, diags := workloadFiles(path)
	if diags.HasErrors() {
		return cfg, diags
	}
	cfg.Dir = workloadDir(path)
	parser := hclparse.NewParser()
	var bodies []*hcl.File
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			diags = diags.Append(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Cannot read workload file",
				Detail:   fmt.Sprintf("Reading %s failed: %s.", name, err),
			})
			continue
		}
		cfg.Files = append(cfg.Files, name)
		cfg.Sources[name] = src
		f, fdiags := parser.ParseHCL(src, name)
		diags = append(diags, fdiags...)
		if f != nil {
			bodies = append(bodies, f)
		}
	}
	if several := severalWorkloads(path, bodies); several != nil {
		return cfg, append(diags, several)
	}
	diags = append(diags, cfg.decodeFiles(bodies)...)
	if diags.HasErrors() {
		return cfg, diags
	}
	diags = append(diags, cfg.evaluateVariables(in)...)
	if diags.HasErrors() {
		return cfg, diags
	}
	diags = append(diags, cfg.evaluateLocals()...)
	if diags.HasErrors() {
		return cfg, diags
	}
	diags = append(diags, cfg.decodeNamedBlocks()...)
	cfg.Evaluated = true
	return cfg, diags
}

func newConfig() *Config {
	return &Config{
		Sources:   map[string][]byte{},
		Variables: map[string]*Variable{},
		Locals:    map[string]*Local{},
		Hardware:  map[string]*Hardware{},
		Models:    map[string]*Model{},
		Layouts:   map[string]*Layout{},
		Datasets:  map[string]*Dataset{},
		Executors: map[string]*Executor{},
	}
}

// workloadFiles lists the .hcl files at path in a stable order.
func workloadFiles(path string) ([]string, hcl.Diagnostics) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Workload not found",
			Detail:   fmt.Sprintf("Cannot read %s: %s. Pass a .hcl file or a directory of them.", path, unwrapPathError(err)),
		}}
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	matches, err := filepath.Glob(filepath.Join(path, "*.hcl"))
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot list workload files", Detail: err.Error()}}
	}
	if len(matches) == 0 {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No workload files",
			Detail:   fmt.Sprintf("The directory %s holds no .hcl files. Pass a .hcl file or a directory of them.", path),
		}}
	}
	sort.Strings(matches)
	return matches, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func workloadDir(path string) string {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return path
	}
	return filepath.Dir(path)
}

// decodeFiles checks each file against the top-level schema and records
// variables, locals, outputs and stages; the other named blocks wait until
// variables and locals have values.
func (c *Config) decodeFiles(files []*hcl.File) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[string]hcl.Range{}
	for _, f := range files {
		content, cdiags := f.Body.Content(fileSchema)
		diags = append(diags, cdiags...)
		for _, b := range content.Blocks {
			if b.Type != blockLocals {
				diags = append(diags, checkDuplicate(seen, b)...)
			}
			diags = append(diags, c.decodeTopBlock(b)...)
		}
	}
	return diags
}

func (c *Config) decodeTopBlock(b *hcl.Block) hcl.Diagnostics {
	switch b.Type {
	case blockVariable:
		return c.decodeVariable(b)
	case blockLocals:
		return c.decodeLocals(b)
	case blockOutput:
		return c.decodeOutput(b)
	case blockStage:
		return c.decodeStage(b)
	case blockExecutor:
		return c.addExecutor(b)
	case blockHardware:
		c.Hardware[b.Labels[0]] = &Hardware{Name: b.Labels[0], Body: b.Body, DeclRange: b.DefRange}
	case blockModel:
		c.Models[b.Labels[0]] = &Model{Name: b.Labels[0], body: b.Body, DeclRange: b.DefRange}
	case blockLayout:
		c.Layouts[b.Labels[0]] = &Layout{Name: b.Labels[0], body: b.Body, DeclRange: b.DefRange}
	case blockDataset:
		c.Datasets[b.Labels[0]] = &Dataset{Name: b.Labels[0], body: b.Body, DeclRange: b.DefRange}
	}
	return nil
}

// checkDuplicate reports a second block of the same type and labels,
// pointing at the first.
func checkDuplicate(seen map[string]hcl.Range, b *hcl.Block) hcl.Diagnostics {
	key := b.Type + " " + strings.Join(b.Labels, ".")
	first, dup := seen[key]
	if !dup {
		seen[key] = b.DefRange
		return nil
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Duplicate %s block", b.Type),
		Detail: fmt.Sprintf("A %s block named %q was already declared at %s. Names must be unique within their block type; rename or remove one.",
			b.Type, strings.Join(b.Labels, "."), first),
		Subject: b.DefRange.Ptr(),
	}}
}

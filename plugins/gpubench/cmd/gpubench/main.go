// Command gpubench runs the benchmark stage's checks on this machine's GPUs
// from a stage body in an HCL or JSON file, without the engine, and prints
// the tables. It is a developer's tool for work on plugins/gpubench; users
// run the same checks as a `benchmark` stage through `gpuflow apply`.
//
//	gpubench -profile h200-x4 -json results.json checks.hcl
//
// In the file, `hardware = profile` refers to the -profile given. With
// GPUFLOW_NODES > 1 in the environment (and GPUFLOW_NODE_RANK,
// GPUFLOW_JOB_DIR, optionally GPUFLOW_NCCL_ID_FILE), it runs as one node of
// a job, as a cluster executor would start the stage: one process per node.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench"
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/native"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
)

func main() {
	os.Exit(run())
}

type options struct {
	profile string
	json    string
	quiet   bool
	file    string
}

func parseFlags() (options, error) {
	var o options
	flag.StringVar(&o.profile, "profile", "", "built-in hardware profile the file's `profile` refers to ("+strings.Join(hardware.BuiltinNames(), ", ")+")")
	flag.StringVar(&o.json, "json", "", "write the results JSON to this file")
	flag.BoolVar(&o.quiet, "q", false, "print only the tables, not the progress log")
	flag.Parse()
	if flag.NArg() != 1 {
		return o, errors.New("usage: gpubench [-profile NAME] [-json FILE] [-q] CHECKS.hcl|CHECKS.json")
	}
	o.file = flag.Arg(0)
	return o, nil
}

func run() int {
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg, err := load(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := measure(ctx, cfg, o.quiet)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		return 1
	}
	fmt.Print(res.Tables())
	if o.json != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err == nil {
			err = os.WriteFile(o.json, data, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gpubench:", err)
			return 1
		}
	}
	if !res.Passed {
		return 3
	}
	return 0
}

// load decodes the file with the stage schema, as the engine would.
func load(o options) (gpubench.Config, error) {
	p := hclparse.NewParser()
	var f *hcl.File
	var diags hcl.Diagnostics
	if filepath.Ext(o.file) == ".json" {
		f, diags = p.ParseJSONFile(o.file)
	} else {
		f, diags = p.ParseHCLFile(o.file)
	}
	if diags.HasErrors() {
		return gpubench.Config{}, diags
	}
	vars := map[string]cty.Value{"profile": cty.NullVal(cty.DynamicPseudoType)}
	if o.profile != "" {
		prof, err := hardware.Builtin(o.profile)
		if err != nil {
			return gpubench.Config{}, err
		}
		vars["profile"] = prof.Value()
	}
	spec := api.StageDecoderSpec(gpubench.StageSchema(), gpubench.StageContract())
	v, diags := hcldec.Decode(f.Body, spec, &hcl.EvalContext{Variables: vars})
	if diags.HasErrors() {
		return gpubench.Config{}, diags
	}
	cfg, pdiags := gpubench.DecodeConfig(v)
	if hd := api.ToHCL(pdiags, f.Body, spec); hd.HasErrors() {
		return cfg, hd
	}
	return cfg, nil
}

// jobEnv is the process environment's share of what a cluster executor
// sets for a stage.
func jobEnv() map[string]string {
	env := map[string]string{}
	for _, k := range []string{api.EnvNodes, api.EnvNodeRank, api.EnvJobDir, api.EnvNCCLIDFile} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

func measure(ctx context.Context, cfg gpubench.Config, quiet bool) (*gpubench.Results, error) {
	job, err := cluster.FromEnv(jobEnv())
	if err != nil {
		return nil, err
	}
	n, err := native.Open(native.Options{LibDirs: cfg.LibDirs, NeedCuBLASLt: cfg.GEMM != nil, NeedNCCL: cfg.NCCL != nil,
		Bootstrap: gpubench.Bootstrap(ctx, job)})
	if err != nil {
		return nil, err
	}
	host, err := preflight.System()
	if err != nil {
		return nil, errors.Join(err, n.Close())
	}
	sink := api.EventSinkFunc(func(e api.Event) {
		if quiet {
			return
		}
		switch {
		case e.Progress != nil:
			fmt.Fprintf(os.Stderr, "%s %s %.0f/%.0f\n", e.Time.Format(time.TimeOnly), e.Progress.Label, e.Progress.Done, e.Progress.Total)
		case e.Log != nil && e.Log.Level != "info":
			fmt.Fprintf(os.Stderr, "%s %s: %s\n", e.Time.Format(time.TimeOnly), e.Log.Level, e.Log.Message)
		}
	})
	r := &gpubench.Runner{Node: n, Host: host, Sink: sink, Now: time.Now, Job: job}
	res := r.Run(ctx, cfg)
	return res, n.Close()
}

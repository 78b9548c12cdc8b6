package gpubench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/native"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// ResultsFile and TablesFile are what a run writes into its run directory.
const (
	ResultsFile = "benchmark.json"
	TablesFile  = "benchmark.txt"
)

// Provider is the benchmark plugin. One stage at a time: a stage claims
// every GPU of the node.
type Provider struct {
	open    func(native.Options) (node.Node, error)
	host    func() (preflight.Host, error)
	setenv  func(key, value string) error
	stopper sdk.Stopper
}

var _ api.Provider = (*Provider)(nil)

// New returns the provider that drives this machine's GPUs.
func New() *Provider {
	return NewOn(native.Open, preflight.System)
}

// NewOn returns a provider that drives the node open returns, on the host
// host reads: a machine other than this one, such as a fake node standing
// in for GPUs in an end-to-end test of gpuflow.
func NewOn(open func(native.Options) (node.Node, error), host func() (preflight.Host, error)) *Provider {
	return &Provider{open: open, host: host, setenv: os.Setenv}
}

// Schema implements api.Provider.
func (p *Provider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{
		Name:         Name,
		Version:      Version,
		Capabilities: []string{api.CapabilityStop},
		StageTypes:   map[string]*api.BlockSchema{StageType: stageSchema},
		Contracts:    map[string]*api.StageContract{StageType: contract},
	}, nil
}

// StageSchema is the body schema of a benchmark stage.
func StageSchema() *api.BlockSchema { return stageSchema }

// StageContract is the benchmark stage's declaration to the engine: the
// meta-arguments it takes.
func StageContract() *api.StageContract { return contract }

// ValidateStage implements api.Provider.
func (p *Provider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	_, diags := DecodeConfig(req.Config)
	return diags, nil
}

// PlanStage implements api.Provider: which checks run, their thresholds,
// and a claim on every GPU of the hardware.
func (p *Provider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	cfg, diags := DecodeConfig(req.Config)
	plan := &api.PlanResponse{Diagnostics: diags, Details: cfg.details()}
	plan.Claims = api.Claims{Nodes: max(cfg.Hardware.Nodes, 1), GPUsPerNode: cfg.Hardware.GPUsPerNode}
	if cfg.Hardware.Nodes > 1 {
		plan.Diagnostics = append(plan.Diagnostics, api.Diagnostic{
			Severity: api.Warning,
			Summary:  "Several nodes need a cluster executor",
			Detail: fmt.Sprintf("The hardware has %d nodes. Under a cluster executor (executor.slurm) every node runs the stage and the NCCL check spans all their GPUs, node 0 judging stragglers; under the local executor only the node the stage runs on is checked (docs/multinode.md).",
				cfg.Hardware.Nodes),
			Path: cty.GetAttrPath("hardware"),
		})
	}
	return plan, nil
}

// ApplyStage implements api.Provider.
func (p *Provider) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	if !req.Config.IsWhollyKnown() {
		return nil, errors.New("benchmark: the host sent a configuration with unknown values to apply")
	}
	cfg, diags := DecodeConfig(req.Config)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}, nil
	}
	ctx, release := p.stopper.Track(ctx)
	defer release()
	// NCCL reads its settings from the process environment when it
	// initialises: the plan's (NCCL_NVLS_ENABLE=0, say) must be there first.
	for k, v := range req.Env {
		if err := p.setenv(k, v); err != nil {
			return nil, fmt.Errorf("benchmark: setting %s: %w", k, err)
		}
	}
	job, err := cluster.FromEnv(req.Env)
	if err != nil {
		return &api.ApplyResponse{Diagnostics: append(diags, api.Diagnostic{
			Severity: api.Error, Summary: "Invalid multi-node job",
			Detail: "The executor's job environment is inconsistent: " + err.Error() + ".",
		})}, nil
	}
	n, err := p.open(native.Options{
		LibDirs:      cfg.LibDirs,
		NeedCuBLASLt: cfg.GEMM != nil,
		NeedNCCL:     cfg.NCCL != nil || (cfg.Health != nil && cfg.Health.MinNCCL != ""),
		Bootstrap:    Bootstrap(ctx, job),
	})
	if err != nil {
		return &api.ApplyResponse{Diagnostics: append(diags, api.Diagnostic{
			Severity: api.Error, Summary: "GPUs unavailable",
			Detail: "The benchmark stage cannot reach the GPUs of this machine: " + err.Error() + ".",
		})}, nil
	}
	host, err := p.host()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("benchmark: reading the host: %w", err), n.Close())
	}
	runner := &Runner{Node: n, Host: host, Sink: sink, Now: time.Now, Job: job}
	res := runner.Run(ctx, cfg)
	if err := n.Close(); err != nil {
		diags = append(diags, api.Diagnostic{Severity: api.Warning, Summary: "GPU resources not released", Detail: err.Error() + "."})
	}
	return p.respond(req, sink, res, cfg.Hardware.InterconnectKind, diags)
}

// respond writes the results files and turns the verdicts into outputs and
// diagnostics.
func (p *Provider) respond(req *api.ApplyRequest, sink api.EventSink, res *Results, interconnect string, diags api.Diagnostics) (*api.ApplyResponse, error) {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("benchmark: encoding results: %w", err)
	}
	path, err := api.AbsPath(req.RunDir, ResultsFile)
	if err != nil {
		return nil, fmt.Errorf("benchmark: %w", err)
	}
	if err := writeFile(path, data); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(req.RunDir, TablesFile), []byte(res.Tables())); err != nil {
		return nil, err
	}
	sink.Send(api.Event{Time: time.Now(), Artifact: &api.Artifact{Name: "results", Path: path, Bytes: int64(len(data))}})
	outputs, err := Outputs(res, data, path)
	if err != nil {
		return nil, err
	}
	outputs["calibration"] = calibrationOutput(res, interconnect)
	for _, v := range res.Checks {
		if !v.Passed {
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  fmt.Sprintf("Benchmark %s failed", v.Check),
				Detail:   strings.Join(v.Failures, "; ") + ".",
				Path:     cty.GetAttrPath(v.Check),
			})
		}
	}
	return &api.ApplyResponse{Outputs: outputs, Diagnostics: diags}, nil
}

// Bootstrap is the native layer's view of job: nil on a single node, else
// this node's place and the NCCL id exchange through the job's directory.
func Bootstrap(ctx context.Context, job *cluster.Job) *native.Bootstrap {
	if job == nil {
		return nil
	}
	return &native.Bootstrap{NodeRank: job.NodeRank, Nodes: job.Nodes,
		ShareID: func(id []byte) ([]byte, error) { return job.ShareID(ctx, id) }}
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("benchmark: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("benchmark: %w", err)
	}
	return nil
}

// Outputs are the stage's outputs: passed, the results file's path, and
// every figure (the results JSON as an object: outputs.results.gemm[0].tflops).
func Outputs(res *Results, data []byte, path string) (map[string]cty.Value, error) {
	t, err := ctyjson.ImpliedType(data)
	if err != nil {
		return nil, fmt.Errorf("benchmark: typing results: %w", err)
	}
	v, err := ctyjson.Unmarshal(data, t)
	if err != nil {
		return nil, fmt.Errorf("benchmark: converting results: %w", err)
	}
	return map[string]cty.Value{
		"passed":       cty.BoolVal(res.Passed),
		"results_file": cty.StringVal(path),
		"results":      v,
	}, nil
}

// Stop implements api.Provider: the running checks end after the current
// step.
func (p *Provider) Stop(context.Context) error {
	p.stopper.Stop()
	return nil
}

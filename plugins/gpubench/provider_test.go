package gpubench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/fakenode"
	"github.com/gpuflow/gpuflow/plugins/gpubench/native"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
)

const labStage = `
hardware = hardware.lab
health {}
gemm {
  dtypes = ["bf16", "fp8"]
  sizes  = [8192]
  expect {
    min_tflops = { bf16 = 670, fp8 = 1265 }
  }
}
hbm {
  bytes = "4GiB"
  expect { min_tbps = 3.8 }
}
p2p {
  bytes = "1GiB"
  expect { min_gbps = 355 }
}
nccl {
  ops       = ["all_reduce"]
  dtype     = "bf16"
  min_bytes = "1MiB"
  max_bytes = "1GiB"
  expect { min_busbw_gbps = 320 }
}
`

func testProvider(f *fakenode.Node, openErr error, env map[string]string) *Provider {
	return &Provider{
		open: func(native.Options) (node.Node, error) {
			if openErr != nil {
				return nil, openErr
			}
			return f, nil
		},
		host:   func() (preflight.Host, error) { return quietHost(len(f.Info)), nil },
		setenv: func(k, v string) error { env[k] = v; return nil },
	}
}

func TestPlanStage(t *testing.T) {
	t.Parallel()
	p := New()
	plan, err := p.PlanStage(context.Background(), &api.StageRequest{Type: StageType, Name: "acceptance", Config: decodeHCL(t, labStage)})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Diagnostics) != 0 || plan.Claims != (api.Claims{Nodes: 1, GPUsPerNode: 4}) {
		t.Errorf("diagnostics %+v, claims %+v", plan.Diagnostics, plan.Claims)
	}
	var b strings.Builder
	for _, d := range plan.Details {
		fmt.Fprintf(&b, "%s: %s\n", d.Key, d.Value)
	}
	golden(t, "plan_lab.txt", b.String())
}

func TestApplyStageWritesResultsAndOutputs(t *testing.T) {
	t.Parallel()
	f := fakenode.New(4, "NVIDIA H200")
	f.BusBWGBps = 300 // below the 320 mark
	env := map[string]string{}
	p := testProvider(f, nil, env)
	dir := t.TempDir()
	req := &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: StageType, Name: "acceptance", Config: decodeHCL(t, labStage),
			Env: map[string]string{"NCCL_NVLS_ENABLE": "0"}},
		RunDir: dir,
	}
	resp, err := p.ApplyStage(context.Background(), req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if env["NCCL_NVLS_ENABLE"] != "0" {
		t.Error("the plan's NCCL environment was not applied before NCCL loads")
	}
	if !f.Closed {
		t.Error("node not closed")
	}
	if len(resp.Diagnostics) != 1 || !resp.Diagnostics[0].Path.Equals(cty.GetAttrPath("nccl")) ||
		!strings.Contains(resp.Diagnostics[0].Detail, "below min_busbw_gbps 320") {
		t.Errorf("diagnostics %+v", resp.Diagnostics)
	}
	if resp.Outputs["passed"].True() {
		t.Error("outputs.passed is true")
	}
	busbw := resp.Outputs["results"].GetAttr("nccl").Index(cty.NumberIntVal(0)).GetAttr("busbw_gbps")
	if got, _ := busbw.AsBigFloat().Float64(); got < 299.99 || got > 300.01 {
		t.Errorf("outputs.results.nccl[0].busbw_gbps = %v", busbw.GoString())
	}
	data, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var res Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.FormatVersion != ResultsFormatVersion || len(res.GEMM) != 8 || len(res.P2P) != 12 || len(res.NCCL) != 12 {
		t.Errorf("results file: version %d, %d gemm, %d p2p, %d nccl rows", res.FormatVersion, len(res.GEMM), len(res.P2P), len(res.NCCL))
	}
	if _, err := os.Stat(filepath.Join(dir, TablesFile)); err != nil {
		t.Error(err)
	}
}

func TestApplyStageWithoutDriverFailsAtOnce(t *testing.T) {
	t.Parallel()
	f := fakenode.New(1, "x")
	p := testProvider(f, errors.New("not found: CUDA driver (libcuda.so.1); looked in /usr/local/nvidia/lib64"), map[string]string{})
	resp, err := p.ApplyStage(context.Background(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Config: decodeHCL(t, labStage)}, RunDir: t.TempDir(),
	}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != "GPUs unavailable" ||
		!strings.Contains(resp.Diagnostics[0].Detail, "libcuda.so.1") || len(f.Calls) != 0 {
		t.Errorf("diagnostics %+v, calls %v", resp.Diagnostics, f.Calls)
	}
}

func TestPlanWarnsAboutSeveralNodes(t *testing.T) {
	t.Parallel()
	v := decodeHCL(t, `health {}`)
	attrs := v.AsValueMap()
	hw := h200x4()
	hw.Nodes = 2
	attrs["hardware"] = hw.Value()
	plan, err := New().PlanStage(context.Background(), &api.StageRequest{Config: cty.ObjectVal(attrs)})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Diagnostics) != 1 || plan.Diagnostics[0].Summary != "Several nodes need a cluster executor" || plan.Claims.Nodes != 2 {
		t.Errorf("plan %+v", plan)
	}
}

func TestApplyStageRejectsAnInconsistentJob(t *testing.T) {
	t.Parallel()
	f := fakenode.New(2, "x")
	p := testProvider(f, nil, map[string]string{})
	resp, err := p.ApplyStage(context.Background(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Config: decodeHCL(t, labStage), Env: map[string]string{api.EnvNodes: "2", api.EnvNodeRank: "1"}},
		RunDir:       t.TempDir(),
	}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != "Invalid multi-node job" ||
		!strings.Contains(resp.Diagnostics[0].Detail, api.EnvJobDir) || len(f.Calls) != 0 {
		t.Errorf("diagnostics %+v, calls %v", resp.Diagnostics, f.Calls)
	}
}

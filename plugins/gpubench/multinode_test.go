package gpubench

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/fakenode"
)

func twoNodeConfig(t *testing.T, expect string) Config {
	t.Helper()
	cfg, diags := DecodeConfig(decodeHCL(t, `
nccl {
  min_bytes = "1MiB"
  max_bytes = "1MiB"
  in_place  = false
  `+expect+`
}
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// runTwoNodes runs the config on two fake nodes of two GPUs at once, as
// two nodes of one job sharing a directory, each GPU slowed as given.
func runTwoNodes(t *testing.T, cfg Config, slowdown [2][]float64) [2]*Results {
	t.Helper()
	dir := t.TempDir()
	var out [2]*Results
	var wg sync.WaitGroup
	for rank := range 2 {
		f := fakenode.New(2, "NVIDIA H200")
		f.Ranks, f.Slowdown = 4, slowdown[rank]
		job := &cluster.Job{NodeRank: rank, Nodes: 2, Dir: dir, IDFile: filepath.Join(dir, "nccl-id"), Wait: 5 * time.Second, Poll: time.Millisecond}
		r := &Runner{Node: f, Host: quietHost(2), Sink: &recorder{}, Now: fixedClock(), Job: job}
		wg.Go(func() { out[rank] = r.Run(context.Background(), cfg) })
	}
	wg.Wait()
	return out
}

func TestRunAcrossNodes(t *testing.T) {
	t.Parallel()
	// 1 MiB of bf16 all_reduce at 350 GB/s busbw over 4 ranks: 1 MiB × 1.5 / 350e9.
	base := float64(1<<20) * 1.5 / 350e9
	tests := map[string]struct {
		expect         string
		slowdown       [2][]float64
		wantStragglers []cluster.Straggler
		wantFailures   []string
	}{
		"even nodes pass": {slowdown: [2][]float64{{1, 1.05}, {1, 1}}},
		"slow GPU on node 1 fails node 0's verdict": {
			slowdown: [2][]float64{{1, 1}, {1.5, 1}},
			wantStragglers: []cluster.Straggler{{Op: "all_reduce", Bytes: 1 << 20, Node: 1, GPU: 0, Rank: 2,
				TimeS: 1.5 * base, MedianS: base, Ratio: 1.5}},
			wantFailures: []string{"node 1 GPU 0 (rank 2) took 1.50x the median of all ranks for all_reduce of 1 MiB (out of place): 6.7 us against 4.5 us, above max_straggler_ratio 1.1"},
		},
		"a looser ratio lets it pass": {expect: "expect { max_straggler_ratio = 1.6 }", slowdown: [2][]float64{{1, 1}, {1.5, 1}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := runTwoNodes(t, twoNodeConfig(t, tc.expect), tc.slowdown)
			if diff := cmp.Diff(tc.wantStragglers, res[0].Stragglers, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
				t.Errorf("node 0's stragglers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFailures, res[0].Checks[0].Failures); diff != "" {
				t.Errorf("node 0's nccl failures (-want +got):\n%s", diff)
			}
			for rank, r := range res {
				if diff := cmp.Diff(&JobPlace{NodeRank: rank, Nodes: 2}, r.Job); diff != "" {
					t.Errorf("node %d's job (-want +got):\n%s", rank, diff)
				}
				if row := r.NCCL[0]; row.Ranks != 4 || math.Abs(row.BusBWGBps/row.AlgBWGBps-1.5) > 1e-9 {
					t.Errorf("node %d's row %+v: want 4 ranks and busbw = 1.5 algbw", rank, row)
				}
			}
			if res[1].Stragglers != nil || !res[1].Passed {
				t.Errorf("node 1 judged stragglers or failed: %+v", res[1].Checks)
			}
		})
	}
}

func TestRunAcrossNodesWithoutTheOtherNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := fakenode.New(2, "NVIDIA H200")
	f.Ranks = 4
	job := &cluster.Job{NodeRank: 0, Nodes: 2, Dir: dir, Wait: 20 * time.Millisecond, Poll: time.Millisecond}
	r := &Runner{Node: f, Host: quietHost(2), Sink: &recorder{}, Now: fixedClock(), Job: job}
	res := r.Run(context.Background(), twoNodeConfig(t, ""))
	if got := strings.Join(res.Checks[0].Failures, "; "); !strings.Contains(got, "straggler detection: node 0 of 2 waited 20ms for node 1's NCCL times") {
		t.Errorf("failures %q, want the missing node named", got)
	}
}

func TestDecodeStragglerRatio(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		expect    string
		want      float64
		wantDiags string
	}{
		"default": {want: 1.1},
		"set":     {expect: "expect { max_straggler_ratio = 1.25 }", want: 1.25},
		"below 1": {expect: "expect { max_straggler_ratio = 0.9 }", want: 1.1, wantDiags: "Invalid straggler ratio"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := DecodeConfig(decodeHCL(t, "nccl {\n"+tc.expect+"\n}\n"))
			var summaries []string
			for _, d := range diags {
				summaries = append(summaries, d.Summary)
			}
			if got := strings.Join(summaries, "; "); got != tc.wantDiags {
				t.Errorf("diagnostics %q, want %q", got, tc.wantDiags)
			}
			if cfg.NCCL.MaxStragglerRatio != tc.want {
				t.Errorf("max_straggler_ratio %g, want %g", cfg.NCCL.MaxStragglerRatio, tc.want)
			}
		})
	}
}

package gpubench

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/fakenode"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
)

// recorder keeps the events a run sends.
type recorder struct {
	mu     sync.Mutex
	events []api.Event
}

func (r *recorder) Send(e api.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) metrics() map[string]float64 {
	out := map[string]float64{}
	for _, e := range r.events {
		if e.Metric != nil {
			out[e.Metric.Name] = e.Metric.Value
		}
	}
	return out
}

// quietHost is a node with a wide port range, GPUs local to CPU 0 and a
// clean environment.
func quietHost(n int) preflight.Host {
	return fakenode.New(n, "x").Host()
}

// fixedClock ticks one second per reading.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func labConfig(t *testing.T) Config {
	t.Helper()
	cfg, diags := DecodeConfig(decodeHCL(t, `
hardware = hardware.lab
health {}
gemm {
  dtypes = ["bf16", "fp8"]
  sizes  = [8192]
  expect {
    min_tflops            = { bf16 = 670, fp8 = 1265 }
    max_slowest_vs_median = 0.05
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
  ops       = ["all_reduce", "alltoall"]
  min_bytes = "1MiB"
  max_bytes = "64MiB"
  factor    = 8
  expect { min_busbw_gbps = 320 }
}
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

func run(t *testing.T, f *fakenode.Node, cfg Config) (*Results, *recorder) {
	t.Helper()
	rec := &recorder{}
	r := &Runner{Node: f, Host: quietHost(len(f.Info)), Sink: rec, Now: fixedClock()}
	return r.Run(context.Background(), cfg), rec
}

func TestRunAllPass(t *testing.T) {
	t.Parallel()
	f := fakenode.New(4, "NVIDIA H200")
	res, rec := run(t, f, labConfig(t))
	for _, v := range res.Checks {
		if !v.Passed || v.Skipped != "" {
			t.Errorf("%s: %+v", v.Check, v)
		}
	}
	if !res.Passed {
		t.Error("run did not pass")
	}
	m := rec.metrics()
	for name, want := range map[string]float64{
		"gemm.bf16.8192.gpu3.tflops":                       750,
		"gemm.fp8.8192.gpu0.tflops":                        1400,
		"hbm.copy.gpu1.tbps":                               4.2,
		"hbm.triad.gpu2.tbps":                              4.3,
		"p2p.gpu0.gpu3.gbps":                               400,
		"nccl.all_reduce.67108864.out_of_place.busbw_gbps": 350,
		"nccl.alltoall.8388608.out_of_place.busbw_gbps":    350,
	} {
		if got, ok := m[name]; !ok || math.Abs(got-want) > 1e-6*want {
			t.Errorf("metric %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	golden(t, "tables_pass.txt", res.Tables())
}

func TestRunNCCLRowsFollowNCCLTests(t *testing.T) {
	t.Parallel()
	res, _ := run(t, fakenode.New(4, "NVIDIA H200"), labConfig(t))
	// all_reduce at 3 sizes in and out of place, alltoall out of place only.
	if len(res.NCCL) != 9 {
		t.Fatalf("%d rows, want 9: %+v", len(res.NCCL), res.NCCL)
	}
	r := res.NCCL[0]
	// busbw = algbw * 2(n-1)/n for all_reduce on 4 ranks.
	if r.Op != node.AllReduce || r.InPlace || math.Abs(r.BusBWGBps/r.AlgBWGBps-1.5) > 1e-9 {
		t.Errorf("first row %+v", r)
	}
	if a := res.NCCL[8]; a.Op != node.Alltoall || a.Count != (64<<20)/2/4 || math.Abs(a.BusBWGBps/a.AlgBWGBps-0.75) > 1e-9 {
		t.Errorf("last row %+v", a)
	}
}

func TestRunFailures(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		change    func(*fakenode.Node)
		wantCheck string
		wantText  string
		// othersFail is set where the change fails other checks too.
		othersFail bool
	}{
		"slow GPU": {
			change:    func(f *fakenode.Node) { f.TFLOPS[2]["bf16"] = 600 },
			wantCheck: "gemm", wantText: "GPU 2 bf16 8192³ ran 600.0 TFLOP/s, below min_tflops 670",
		},
		"straggler against the median": {
			change:    func(f *fakenode.Node) { f.TFLOPS[1]["fp8"] = 1300 },
			wantCheck: "gemm", wantText: "GPU 1 fp8 8192³ ran 1300.0 TFLOP/s, 7.1% behind the node median 1400.0",
		},
		"slow memory": {
			change:    func(f *fakenode.Node) { f.CopyTBps[0] = 3.5 },
			wantCheck: "hbm", wantText: "GPU 0 copied at 3.50 TB/s, below min_tbps 3.8",
		},
		"corrupt copies": {
			change:    func(f *fakenode.Node) { f.Wrong = 3 },
			wantCheck: "hbm", wantText: "GPU 0: 3 elements of the copy or triad came out wrong", othersFail: true,
		},
		"slow links": {
			change:    func(f *fakenode.Node) { f.P2PGBps = 50 },
			wantCheck: "p2p", wantText: "GPU 0 -> GPU 1 copied at 50.0 GB/s, below min_gbps 355",
		},
		"slow collectives": {
			change:    func(f *fakenode.Node) { f.BusBWGBps = 100 },
			wantCheck: "nccl", wantText: "all_reduce bf16 of 64 MiB reached a bus bandwidth of 100.0 GB/s, below min_busbw_gbps 320",
		},
		"hung collective": {
			change:    func(f *fakenode.Node) { f.HangOn = node.Alltoall },
			wantCheck: "nccl", wantText: "nccl alltoall bf16 of 1048576 bytes (out-of-place) hung: no completion on GPUs [3]",
		},
		"missing GPU": {
			change:    func(f *fakenode.Node) { f.Info = f.Info[:3]; f.TFLOPS = f.TFLOPS[:3] },
			wantCheck: "health", wantText: "the node shows 3 GPUs, expected 4",
		},
		"hot and throttled GPU": {
			change: func(f *fakenode.Node) {
				f.HealthOf = []node.Health{{GPU: 0, Name: "NVIDIA H200", BusID: f.Info[0].BusID, MemoryBytes: f.Info[0].MemoryBytes,
					ECCEnabled: true, NVLinksSupported: 18, NVLinksActive: 17, TemperatureC: 91, ClockEvents: node.ClockHWThermal | node.ClockIdle}}
			},
			wantCheck: "health", wantText: "GPU 0 (0000:18:00.0) has 17 of 18 NVLinks up, expected 18; GPU 0 (0000:18:00.0) is at 91 °C, above 85; GPU 0 (0000:18:00.0) is slowed by hw_thermal_slowdown",
		},
		"gemm error": {
			change: func(f *fakenode.Node) {
				f.Fail = map[string]error{"GEMM fp8": errors.New("cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED (15)")}
			},
			wantCheck: "gemm", wantText: "fp8 8192³: cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED (15)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := fakenode.New(4, "NVIDIA H200")
			tc.change(f)
			res, _ := run(t, f, labConfig(t))
			if res.Passed {
				t.Fatal("run passed")
			}
			for _, v := range res.Checks {
				joined := strings.Join(v.Failures, "; ")
				if v.Check == tc.wantCheck && !strings.Contains(joined, tc.wantText) {
					t.Errorf("%s failures %q lack %q", v.Check, joined, tc.wantText)
				}
				if v.Check != tc.wantCheck && !v.Passed && !tc.othersFail {
					t.Errorf("%s failed too: %q", v.Check, joined)
				}
			}
		})
	}
}

func TestRunOneGPUSkipsP2P(t *testing.T) {
	t.Parallel()
	cfg := labConfig(t)
	cfg.Health.GPUs = 1
	cfg.NCCL.MinBusBWGBps = nil
	res, _ := run(t, fakenode.New(1, "NVIDIA H100 80GB HBM3"), cfg)
	var got []string
	for _, v := range res.Checks {
		got = append(got, v.Check+":"+v.Skipped)
	}
	want := []string{"health:", "gemm:", "hbm:", "p2p:one GPU: no pair to copy between", "nccl:"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if !strings.Contains(strings.Join(res.Checks[0].Failures, ";"), `is "NVIDIA H100 80GB HBM3", expected a H200`) {
		t.Errorf("health failures %q do not name the wrong model", res.Checks[0].Failures)
	}
}

func TestRunStoppedFailsRemainingChecks(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &Runner{Node: fakenode.New(2, "NVIDIA H200"), Host: quietHost(2), Sink: &recorder{}, Now: fixedClock()}
	res := r.Run(ctx, labConfig(t))
	if res.Passed || len(res.Checks) != 5 || !strings.HasPrefix(res.Checks[4].Failures[0], "not run: the stage was stopped") {
		t.Errorf("results %+v", res.Checks)
	}
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"580.159.04", "550.54", 1}, {"550.9", "550.54", -1}, {"2.28.3", "2.28", 1},
		{"13.0", "13.0", 0}, {"", "2.18", -1}, {"12.4", "12.10", -1},
	}
	for _, tc := range tests {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

package plandiff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/ncclenv"
)

// edited returns base7b with an edit applied.
func edited(edit func(s *trainSpec)) trainSpec {
	s := base7b()
	s.args = map[string]any{"lr": 3e-4, "steps": 1000}
	edit(&s)
	return s
}

func TestNumerics(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		new      trainSpec
		wantPerf bool
		want     []string // paths of the changes, in order
	}{
		"micro batch, same global batch": {new: edited(func(s *trainSpec) { s.layout.MicroBatch = 2 }), wantPerf: true},
		"tp and dp swapped":              {new: edited(func(s *trainSpec) { s.layout.TP, s.layout.DP = 4, 2 }), wantPerf: true},
		"more recomputation":             {new: edited(func(s *trainSpec) { s.layout.Recompute = layout.RecomputeFull }), wantPerf: true},
		"twice the nodes, same layout":   {new: edited(func(s *trainSpec) { s.nodes = 2 }), wantPerf: true},
		"checkpoints more often":         {new: edited(func(s *trainSpec) { s.args["checkpoint_every"] = 100 }), wantPerf: true},
		"precision bf16 to fp8":          {new: edited(func(s *trainSpec) { s.layout.Precision = "fp8" }), want: []string{"precision"}},
		"global batch doubled": {new: edited(func(s *trainSpec) { s.layout.GlobalBatch = 512 }),
			want: []string{"global_batch", "tokens_per_step"}},
		"learning-rate schedule": {new: edited(func(s *trainSpec) { s.args["warmup_steps"] = 100; s.args["lr"] = 1e-4 }),
			want: []string{"lr", "warmup_steps"}},
		"an argument gpuflow does not know": {new: edited(func(s *trainSpec) { s.args["seed"] = 7 }), want: []string{"seed"}},
		"a longer run":                      {new: edited(func(s *trainSpec) { s.args["steps"] = 2000 }), want: []string{"steps"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := compareStage(trainingStage(t, base7b()), trainingStage(t, tc.new), map[string]*Stage{})
			if st.Status != StatusReplaced || st.Numerics == nil {
				t.Fatalf("status %s, numerics %+v: want a replaced stage with a numerics check", st.Status, st.Numerics)
			}
			var paths []string
			for _, c := range st.Numerics.Changes {
				paths = append(paths, c.Path)
			}
			if st.Numerics.PerformanceOnly != tc.wantPerf {
				t.Errorf("performance only = %v, want %v", st.Numerics.PerformanceOnly, tc.wantPerf)
			}
			if diff := cmp.Diff(tc.want, paths); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumericsTokensPerStep(t *testing.T) {
	t.Parallel()
	o, n := trainingStage(t, base7b()), trainingStage(t, base7b())
	n.Model.SeqLen *= 2
	got := checkNumerics(o, n, nil, nil)
	want := &Numerics{Changes: []Change{{Path: "tokens_per_step", Old: mustJSON(256 * o.Model.SeqLen), New: mustJSON(256 * n.Model.SeqLen)}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNumericsUpstream(t *testing.T) {
	t.Parallel()
	o, n := trainingStage(t, base7b()), trainingStage(t, base7b())
	n.ConfigUnknown = []string{"data"}
	got := checkNumerics(o, n, nil, []string{"data_prep.corpus"})
	want := &Numerics{Upstream: []string{"data_prep.corpus"}, AfterApply: []string{"data"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCheckpoint(t *testing.T) {
	t.Parallel()
	zero1 := func(s *trainSpec) { s.layout.ZeRO = 1 }
	tests := map[string]struct {
		old, new    trainSpec
		wantVerdict string
		wantReasons []string
		wantHow     string // a phrase the advice must hold; empty means no advice
	}{
		"micro batch only": {old: base7b(), new: edited(func(s *trainSpec) { s.layout.MicroBatch = 2 }),
			wantVerdict: CheckpointResume, wantReasons: []string{"tp, pp, vp, the layers per stage and the ZeRO/FSDP sharding are unchanged"}},
		"dp without sharding": {old: base7b(), new: edited(func(s *trainSpec) { s.nodes, s.layout.DP = 2, 8 }),
			wantVerdict: CheckpointResume,
			wantReasons: []string{"dp 4 -> 8 only, and without ZeRO/FSDP sharding every data-parallel rank holds the whole state"}},
		"tp": {old: base7b(), new: edited(func(s *trainSpec) { s.layout.TP, s.layout.DP = 4, 2 }),
			wantVerdict: CheckpointReshard, wantReasons: []string{"tp 2 -> 4 splits every weight matrix differently"}, wantHow: "--ckpt-format torch_dist"},
		"pp then vp": {old: edited(func(s *trainSpec) { s.layout.PP, s.layout.DP = 2, 2 }),
			new:         edited(func(s *trainSpec) { s.layout.PP, s.layout.DP, s.layout.VP = 2, 2, 2 }),
			wantVerdict: CheckpointReshard, wantReasons: []string{"vp 1 -> 2 regroups the layers each pipeline rank holds"}, wantHow: "torch_dist"},
		"stage layers": {old: edited(func(s *trainSpec) { s.layout.PP, s.layout.DP = 2, 2 }),
			new:         edited(func(s *trainSpec) { s.layout.PP, s.layout.DP, s.layout.FirstStageLayers = 2, 2, 15 }),
			wantVerdict: CheckpointReshard, wantReasons: []string{"layers per pipeline stage 16 x 2 -> 15, 17 gives each pipeline rank other layers"}, wantHow: "torch_dist"},
		"stage layers written at the even share": {old: edited(func(s *trainSpec) { s.layout.PP, s.layout.DP = 2, 2 }),
			new:         edited(func(s *trainSpec) { s.layout.PP, s.layout.DP, s.layout.FirstStageLayers = 2, 2, 16 }),
			wantVerdict: CheckpointResume, wantReasons: []string{"tp, pp, vp, the layers per stage and the ZeRO/FSDP sharding are unchanged"}},
		"dp under ZeRO-1": {old: edited(zero1), new: edited(func(s *trainSpec) { zero1(s); s.nodes, s.layout.DP = 2, 8 }),
			wantVerdict: CheckpointReshard,
			wantReasons: []string{"ZeRO-1 shards the optimizer state over the data-parallel ranks: dp 4 -> 8 cuts other shards"}, wantHow: "torch_dist"},
		"FSDP switched on, PyTorch": {old: edited(func(s *trainSpec) { s.framework = estimate.FrameworkFSDP2 }),
			new:         edited(func(s *trainSpec) { s.framework = estimate.FrameworkFSDP2; s.layout.FSDP = true }),
			wantVerdict: CheckpointReshard, wantReasons: []string{"sharding none -> FSDP splits the saved state differently"},
			wantHow: "torch.distributed.checkpoint (DCP)"},
		"ZeRO under DeepSpeed": {old: edited(func(s *trainSpec) { s.framework = estimate.FrameworkDeepSpeed }),
			new:         edited(func(s *trainSpec) { s.framework = estimate.FrameworkDeepSpeed; s.layout.ZeRO = 2 }),
			wantVerdict: CheckpointReshard, wantReasons: []string{"sharding none -> ZeRO-2 splits the saved state differently"},
			wantHow: "ds_to_universal.py"},
		"another model": {old: base7b(), new: edited(func(s *trainSpec) { s.preset = "llama3-8b" }),
			wantVerdict: CheckpointIncompatible, wantHow: "optimizer state starts anew"},
		"another framework": {old: base7b(), new: edited(func(s *trainSpec) { s.framework = estimate.FrameworkFSDP2 }),
			wantVerdict: CheckpointIncompatible, wantReasons: []string{"framework megatron -> fsdp2 writes checkpoints in another format"},
			wantHow: "optimizer state starts anew"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := checkCheckpoint(trainingStage(t, tc.old), trainingStage(t, tc.new))
			if got.Verdict != tc.wantVerdict {
				t.Errorf("verdict %s, want %s (reasons %q)", got.Verdict, tc.wantVerdict, got.Reasons)
			}
			if tc.wantReasons != nil {
				if diff := cmp.Diff(tc.wantReasons, got.Reasons); diff != "" {
					t.Errorf("reasons (-want +got):\n%s", diff)
				}
			} else if len(got.Reasons) == 0 {
				t.Error("no reasons given")
			}
			if (tc.wantHow == "") != (got.How == "") || !strings.Contains(got.How, tc.wantHow) {
				t.Errorf("how %q, want it to mention %q", got.How, tc.wantHow)
			}
		})
	}
}

func TestCompareNCCL(t *testing.T) {
	t.Parallel()
	s := func(name, value string) ncclenv.Setting {
		return ncclenv.Setting{Name: name, Value: value, Source: ncclenv.SourceDerived, Reason: "why " + name}
	}
	str := func(v string) *string { return &v }
	old := []ncclenv.Setting{s("NCCL_P2P_LEVEL", "NVL"), s("NCCL_ALGO", "Ring"), s("NCCL_DEBUG", "WARN")}
	new := []ncclenv.Setting{s("NCCL_DEBUG", "WARN"), s("NCCL_IB_HCA", "mlx5"), s("NCCL_P2P_LEVEL", "SYS")}
	want := []NCCLChange{
		{Name: "NCCL_IB_HCA", New: str("mlx5"), Source: ncclenv.SourceDerived, Reason: "why NCCL_IB_HCA"},
		{Name: "NCCL_P2P_LEVEL", Old: str("NVL"), New: str("SYS"), Source: ncclenv.SourceDerived, Reason: "why NCCL_P2P_LEVEL"},
		{Name: "NCCL_ALGO", Old: str("Ring"), Source: ncclenv.SourceDerived, Reason: "why NCCL_ALGO"},
	}
	if diff := cmp.Diff(want, compareNCCL(old, new)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

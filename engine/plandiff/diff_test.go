package plandiff

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/ncclenv"
)

// statuses maps each stage of a diff to its status.
func statuses(d *Diff) map[string]string {
	out := map[string]string{}
	for _, st := range d.Stages {
		out[st.Address] = st.Status
	}
	return out
}

func TestCompareStatuses(t *testing.T) {
	t.Parallel()
	prep := func(inputs string) *engine.StagePlan {
		return plainStage("data_prep.corpus", map[string]any{"inputs": []string{inputs}, "workers": 4})
	}
	reader := func(t *testing.T) *engine.StagePlan {
		sp := trainingStage(t, base7b())
		sp.DependsOn = []string{"data_prep.corpus"}
		sp.ConfigUnknown = []string{"data"}
		return sp
	}
	tests := map[string]struct {
		old, new    func(t *testing.T) *engine.Plan
		want        map[string]string
		wantSummary Summary
		wantChanges bool
	}{
		"identical plans": {
			old:         func(t *testing.T) *engine.Plan { return planOf(prep("a/*.jsonl"), reader(t)) },
			new:         func(t *testing.T) *engine.Plan { return planOf(prep("a/*.jsonl"), reader(t)) },
			want:        map[string]string{"data_prep.corpus": StatusUnchanged, "pretrain.main": StatusUnchanged},
			wantSummary: Summary{Unchanged: 2},
		},
		"stage added and removed": {
			old:         func(t *testing.T) *engine.Plan { return planOf(prep("a"), plainStage("data_prep.old", nil)) },
			new:         func(t *testing.T) *engine.Plan { return planOf(prep("a"), plainStage("data_prep.new", nil)) },
			want:        map[string]string{"data_prep.corpus": StatusUnchanged, "data_prep.new": StatusAdded, "data_prep.old": StatusRemoved},
			wantSummary: Summary{Added: 1, Removed: 1, Unchanged: 1},
			wantChanges: true,
		},
		"changed input replaces the reader downstream": {
			old:         func(t *testing.T) *engine.Plan { return planOf(prep("a"), reader(t)) },
			new:         func(t *testing.T) *engine.Plan { return planOf(prep("b"), reader(t)) },
			want:        map[string]string{"data_prep.corpus": StatusReplaced, "pretrain.main": StatusReplaced},
			wantSummary: Summary{Replaced: 2},
			wantChanges: true,
		},
		"a stage reading nothing unknown stays": {
			old: func(t *testing.T) *engine.Plan { return planOf(prep("a"), trainingStage(t, base7b())) },
			new: func(t *testing.T) *engine.Plan {
				sp := trainingStage(t, base7b())
				sp.DependsOn = []string{"data_prep.corpus"}
				return planOf(prep("b"), sp)
			},
			want:        map[string]string{"data_prep.corpus": StatusReplaced, "pretrain.main": StatusChanged},
			wantSummary: Summary{Replaced: 1, Changed: 1},
			wantChanges: true,
		},
		"NCCL setting only": {
			old: func(t *testing.T) *engine.Plan { return planOf(trainingStage(t, base7b())) },
			new: func(t *testing.T) *engine.Plan {
				sp := trainingStage(t, base7b())
				sp.NCCLEnv = append(sp.NCCLEnv, ncclenv.Setting{Name: "NCCL_BUFFSIZE", Value: "8388608", Source: ncclenv.SourceOverride})
				return planOf(sp)
			},
			want:        map[string]string{"pretrain.main": StatusChanged},
			wantSummary: Summary{Changed: 1},
			wantChanges: true,
		},
		"job script only": {
			old: func(t *testing.T) *engine.Plan {
				sp := trainingStage(t, base7b())
				sp.Executor = &engine.ExecutorPlan{Address: "executor.slurm.c", Kind: "slurm", Script: "#!/bin/sh\n#SBATCH -t 60\n"}
				return planOf(sp)
			},
			new: func(t *testing.T) *engine.Plan {
				sp := trainingStage(t, base7b())
				sp.Executor = &engine.ExecutorPlan{Address: "executor.slurm.c", Kind: "slurm", Script: "#!/bin/sh\n#SBATCH -t 120\n"}
				return planOf(sp)
			},
			want:        map[string]string{"pretrain.main": StatusChanged},
			wantSummary: Summary{Changed: 1},
			wantChanges: true,
		},
		"plugin upgrade": {
			old: func(t *testing.T) *engine.Plan { return planOf(prep("a")) },
			new: func(t *testing.T) *engine.Plan {
				sp := prep("a")
				sp.Plugin.Version = "0.2.0"
				return planOf(sp)
			},
			want:        map[string]string{"data_prep.corpus": StatusReplaced},
			wantSummary: Summary{Replaced: 1},
			wantChanges: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := Compare(tc.old(t), tc.new(t))
			if diff := cmp.Diff(tc.want, statuses(d)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSummary, d.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if got := d.HasChanges(); got != tc.wantChanges {
				t.Errorf("HasChanges = %v, want %v", got, tc.wantChanges)
			}
		})
	}
}

func TestCompareOrderAndReasons(t *testing.T) {
	t.Parallel()
	old := planOf(plainStage("data_prep.gone", nil), plainStage("data_prep.a", map[string]any{"seed": 1}))
	new := planOf(plainStage("data_prep.b", nil), plainStage("data_prep.a", map[string]any{"seed": 2}))
	d := Compare(old, new)
	var order []string
	for _, st := range d.Stages {
		order = append(order, st.Address)
	}
	if diff := cmp.Diff([]string{"data_prep.b", "data_prep.a", "data_prep.gone"}, order); diff != "" {
		t.Errorf("order: new plan's stages, then removed ones (-want +got):\n%s", diff)
	}
	a := d.Stages[1]
	want := &Stage{Address: "data_prep.a", Type: "data_prep", Status: StatusReplaced, OldAction: "create", NewAction: "create",
		Reasons:   []string{"arguments change: seed"},
		Arguments: []Change{{Path: "seed", Old: raw("1"), New: raw("2")}}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("stage (-want +got):\n%s", diff)
	}
}

func TestVariableChanges(t *testing.T) {
	t.Parallel()
	v := func(value string, sensitive bool) engine.PlanVariable {
		return engine.PlanVariable{Value: json.RawMessage(value), Source: "default", Sensitive: sensitive}
	}
	old := map[string]engine.PlanVariable{"nodes": v("1", false), "same": v(`"x"`, false), "token": v(`"a"`, true), "gone": v("true", false)}
	new := map[string]engine.PlanVariable{"nodes": v("2", false), "same": v("\"x\"\n", false), "token": v(`"b"`, true), "new": v(`[1, 2]`, false)}
	want := []Change{
		{Path: "gone", Old: raw("true")},
		{Path: "new", New: raw("[1,2]")},
		{Path: "nodes", Old: raw("1"), New: raw("2")},
		{Path: "token", Sensitive: true},
	}
	if diff := cmp.Diff(want, variableChanges(old, new)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

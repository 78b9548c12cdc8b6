package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
)

func TestApplyCaching(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		// second is the workload of the second apply ("" keeps the first).
		second       string
		po           engine.PlanOptions
		want         map[string]string
		wantLaunches int
		// partial: stages outside the targets are left to a later apply.
		partial bool
	}{
		"nothing changed": {
			want: map[string]string{"step.a": "unchanged: unchanged since the last apply",
				"step.b": "unchanged: unchanged since the last apply", "step.c": "unchanged: unchanged since the last apply"},
		},
		"upstream output changed": {
			second:       strings.Replace(chainHCL, `value = "A"`, `value = "Z"`, 1),
			want:         map[string]string{"step.a": "succeeded", "step.b": "succeeded", "step.c": "succeeded"},
			wantLaunches: 3,
		},
		"upstream reran with the same outputs": {
			second: strings.Replace(chainHCL, `value = "A"`, `value = "A"
  tag = "new"`, 1),
			want: map[string]string{"step.a": "succeeded", "step.b": "unchanged: inputs match the last successful run",
				"step.c": "unchanged: inputs match the last successful run"},
			wantLaunches: 1,
		},
		"replace forces a rerun": {
			po:           engine.PlanOptions{Replace: []string{"stage.step.a"}},
			want:         map[string]string{"step.a": "succeeded", "step.b": "unchanged: inputs match the last successful run", "step.c": "unchanged: inputs match the last successful run"},
			wantLaunches: 1,
		},
		"replace of a downstream stage": {
			po:           engine.PlanOptions{Replace: []string{"step.b"}},
			want:         map[string]string{"step.a": "unchanged: unchanged since the last apply", "step.b": "succeeded", "step.c": "unchanged: inputs match the last successful run"},
			wantLaunches: 1,
		},
		"target runs only what it needs": {
			second:       strings.Replace(chainHCL, `value = "A"`, `value = "Z"`, 1),
			po:           engine.PlanOptions{Targets: []string{"step.b"}},
			want:         map[string]string{"step.a": "succeeded", "step.b": "succeeded"},
			wantLaunches: 2,
			partial:      true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, chainHCL)
			if res, _ := r.apply(context.Background(), engine.PlanOptions{}); !res.OK() {
				t.Fatal(outcomes(res))
			}
			if tc.second != "" {
				r.write(tc.second)
			}
			before := r.world.launchCount()
			res, st := r.apply(context.Background(), tc.po)
			if diff := cmp.Diff(tc.want, outcomes(res)); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if got := r.world.launchCount() - before; got != tc.wantLaunches {
				t.Errorf("%d plugin processes started, want %d", got, tc.wantLaunches)
			}
			// A third plan finds nothing to do: what apply recorded hashes
			// as plan hashes it.
			_, plan, _ := r.plan(engine.PlanOptions{})
			for _, sp := range plan.Stages {
				if tc.partial && tc.want[sp.Address] == "" {
					continue
				}
				if sp.Action != engine.ActionNoOp {
					t.Errorf("after apply, %s planned %s %v", sp.Address, sp.Action, sp.Reasons)
				}
			}
			for addr, s := range st.Stages {
				if s.Status != state.StatusSucceeded {
					t.Errorf("%s recorded %s", addr, s.Status)
				}
			}
		})
	}
}

func TestApplyResumesAfterFailure(t *testing.T) {
	t.Parallel()
	r := newRig(t, strings.Replace(chainHCL, `value = "A"`, `value = "A"
  fail = true`, 1)+`stage "step" "other" {}`)
	if res, _ := r.apply(context.Background(), engine.PlanOptions{}); res.OK() {
		t.Fatal("first apply should fail")
	}
	r.write(chainHCL + `stage "step" "other" {}`)
	before := r.world.launchCount()
	res, _ := r.apply(context.Background(), engine.PlanOptions{})
	want := map[string]string{"step.a": "succeeded", "step.b": "succeeded", "step.c": "succeeded",
		"step.other": "unchanged: unchanged since the last apply"}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if got := r.world.launchCount() - before; got != 3 {
		t.Errorf("%d launches on resume, want 3", got)
	}
}

func TestCheckSavedPlan(t *testing.T) {
	t.Parallel()
	r := newRig(t, chainHCL)
	w, plan, _ := r.plan(engine.PlanOptions{})
	if err := engine.CheckSavedPlan(plan, w, nil); err != nil {
		t.Fatalf("fresh plan refused: %v", err)
	}
	r.apply(context.Background(), engine.PlanOptions{})
	st, err := state.Read(r.statePath())
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.CheckSavedPlan(plan, w, st); err == nil || !strings.Contains(err.Error(), "state") {
		t.Errorf("plan made before the state existed: %v, want a state complaint", err)
	}
	w2, plan2, _ := r.plan(engine.PlanOptions{})
	if err := engine.CheckSavedPlan(plan2, w2, st); err != nil {
		t.Errorf("plan made against current state refused: %v", err)
	}
	moved := *st
	moved.Serial++
	if err := engine.CheckSavedPlan(plan2, w2, &moved); err == nil || !strings.Contains(err.Error(), "serial") {
		t.Errorf("state moved on: %v, want a serial complaint", err)
	}
	r.write(chainHCL + "\n# edited\n")
	w3, _, _ := r.plan(engine.PlanOptions{})
	if err := engine.CheckSavedPlan(plan2, w3, st); err == nil || !strings.Contains(err.Error(), "files or variables changed") {
		t.Errorf("config edited: %v, want a config complaint", err)
	}
}

func TestSavedPlanInputs(t *testing.T) {
	t.Parallel()
	plan := &engine.Plan{Variables: map[string]engine.PlanVariable{
		"s": {Value: []byte(`"a b"`)}, "n": {Value: []byte(`4`)}, "l": {Value: []byte(`["x",1]`)}, "z": {Value: []byte(`null`)},
	}}
	in, err := engine.SavedPlanInputs(plan)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`l=["x",1]`, "n=4", "s=a b"}, in.Vars); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

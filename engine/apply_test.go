package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
)

// applyRig is a workload directory with its state, applied with stepWorld.
type applyRig struct {
	t     *testing.T
	dir   string
	world *stepWorld
	// opts is applied to the ApplyOptions of every apply.
	opts func(*engine.ApplyOptions)
}

func newRig(t *testing.T, src string) *applyRig {
	t.Helper()
	r := &applyRig{t: t, dir: t.TempDir(), world: newStepWorld(), opts: func(*engine.ApplyOptions) {}}
	r.write(src)
	return r
}

func (r *applyRig) write(src string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, "main.hcl"), []byte(src), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *applyRig) statePath() string { return filepath.Join(r.dir, ".gpuflow", "state", "w.json") }

// plan plans the workload against the current state.
func (r *applyRig) plan(po engine.PlanOptions) (*engine.Workload, *engine.Plan, engine.Plugins) {
	r.t.Helper()
	w, diags := engine.LoadWorkload(r.dir, dsl.Inputs{})
	if diags.HasErrors() {
		r.t.Fatal(diags)
	}
	plugins, err := engine.NewPluginSet(context.Background(), r.world.planning())
	if err != nil {
		r.t.Fatal(err)
	}
	po.Plugins = plugins
	if st, err := state.Read(r.statePath()); err == nil {
		po.State = st
	}
	plan, diags := engine.BuildPlan(context.Background(), w, po)
	if diags.HasErrors() {
		r.t.Fatal(diags)
	}
	return w, plan, plugins
}

// apply plans and applies, returning the result and the state after.
func (r *applyRig) apply(ctx context.Context, po engine.PlanOptions) (*engine.ApplyResult, *state.State) {
	r.t.Helper()
	w, plan, plugins := r.plan(po)
	sf, err := engine.OpenState(r.statePath(), w.Path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer sf.Close()
	opts := engine.ApplyOptions{Plugins: plugins, Launcher: r.world, State: sf,
		RunsDir: filepath.Join(r.dir, ".gpuflow", "runs"), StopGrace: 50 * time.Millisecond}
	r.opts(&opts)
	res, diags := engine.Apply(ctx, plan, w, opts)
	if diags.HasErrors() {
		r.t.Fatal(diags)
	}
	st, err := state.Read(r.statePath())
	if err != nil && !errors.Is(err, state.ErrNotExist) {
		r.t.Fatal(err)
	}
	return res, st
}

// outcomes maps each stage to "outcome: reason".
func outcomes(res *engine.ApplyResult) map[string]string {
	out := map[string]string{}
	for _, s := range res.Stages {
		out[s.Address] = strings.TrimSuffix(s.Outcome+": "+s.Reason, ": ")
	}
	return out
}

func statuses(st *state.State) map[string]string {
	out := map[string]string{}
	if st == nil {
		return out
	}
	for addr, s := range st.Stages {
		out[addr] = s.Status
	}
	return out
}

const chainHCL = `
stage "step" "a" {
  value = "A"
}
stage "step" "b" { input = stage.step.a.outputs.value }
stage "step" "c" { input = "${stage.step.b.outputs.echo}-${stage.step.b.outputs.list[1]}" }
`

func TestApplyChainPassesOutputs(t *testing.T) {
	t.Parallel()
	r := newRig(t, chainHCL)
	res, st := r.apply(context.Background(), engine.PlanOptions{})
	want := map[string]string{"step.a": "succeeded", "step.b": "succeeded", "step.c": "succeeded"}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	if got := string(st.Stages["step.c"].Outputs["echo"]); got != `"A-3"` {
		t.Errorf("step.c echo = %s, want \"A-3\" (b's echo of a's value, and the length of b's own)", got)
	}
	b := st.Stages["step.b"]
	if diff := cmp.Diff(state.Metric{Last: 1, Min: 1, Max: 3, Count: 3}, b.Metrics["loss"]); diff != "" {
		t.Errorf("loss summary (-want +got):\n%s", diff)
	}
	if b.StartedAt.IsZero() || b.EndedAt.Before(b.StartedAt) || b.InputHash == "" {
		t.Errorf("record lacks times or hash: %+v", b)
	}
	log, err := os.ReadFile(b.LogPath)
	if err != nil || !strings.Contains(string(log), "hello from b") {
		t.Errorf("log %s: %v\n%s", b.LogPath, err, log)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(b.LogPath), "events.jsonl")); err != nil {
		t.Error(err)
	}
	if !res.OK() || r.world.launchCount() != 3 {
		t.Errorf("OK %v, %d launches; want true, 3 (one process per stage)", res.OK(), r.world.launchCount())
	}
}

func TestApplyFailureSkipsDependents(t *testing.T) {
	t.Parallel()
	r := newRig(t, strings.Replace(chainHCL, `value = "A"`, `fail = true`, 1)+`stage "step" "other" {}`)
	res, st := r.apply(context.Background(), engine.PlanOptions{})
	want := map[string]string{
		"step.a":     "failed: Step failed",
		"step.b":     "skipped: stage.step.a failed",
		"step.c":     "skipped: stage.step.b skipped",
		"step.other": "succeeded",
	}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"step.a": "failed", "step.other": "succeeded"}, statuses(st)); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	d := res.Stages[0].Diagnostics
	if len(d) != 1 || d[0].Subject == nil || d[0].Subject.Start.Line != 3 {
		t.Errorf("diagnostic should point at fail = true on line 3: %v", d)
	}
	if !strings.Contains(st.Stages["step.a"].Error, "Step failed") {
		t.Errorf("state error %q does not carry the diagnostic", st.Stages["step.a"].Error)
	}
}

func TestApplyCrashFailsOnlyThatStage(t *testing.T) {
	t.Parallel()
	r := newRig(t, `
stage "step" "boom" { crash = true }
stage "step" "fine" {}
`)
	res, _ := r.apply(context.Background(), engine.PlanOptions{})
	want := map[string]string{"step.boom": "failed: plugin step exited unexpectedly", "step.fine": "succeeded"}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	d := res.Stages[0].Diagnostics
	if len(d) != 1 || !strings.Contains(d[0].Detail, "panic: step crashed on purpose") {
		t.Errorf("crash diagnostic lacks the stderr tail: %v", d)
	}
}

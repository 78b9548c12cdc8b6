package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
)

// cancelWhenStarted cancels the apply once the named stage has started.
func cancelWhenStarted(r *applyRig, stage string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	r.world.started = make(chan string, 16)
	go func() {
		for name := range r.world.started {
			if name == stage {
				cancel()
			}
		}
	}()
	r.t.Cleanup(cancel)
	return ctx
}

func TestApplyCancel(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		body       string
		wantKilled int
	}{
		"stage honours Stop": {body: `sleep = "1h"`, wantKilled: 0},
		"stage ignores Stop": {body: `hang = true`, wantKilled: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, `
stage "step" "long" { `+tc.body+` }
stage "step" "after" { depends_on = [stage.step.long] }
`)
			res, st := r.apply(cancelWhenStarted(r, "long"), engine.PlanOptions{})
			want := map[string]string{
				"step.long":  "interrupted: the apply was interrupted and the stage stopped",
				"step.after": "skipped: stage.step.long interrupted",
			}
			if diff := cmp.Diff(want, outcomes(res)); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if got := statuses(st)["step.long"]; got != state.StatusInterrupted {
				t.Errorf("state says %q, want interrupted", got)
			}
			if !r.world.procs[0].stopped.Load() {
				t.Error("Stop was not sent")
			}
			if got := r.world.killedByHost(); got != tc.wantKilled {
				t.Errorf("%d processes killed mid-stage, want %d", got, tc.wantKilled)
			}
		})
	}
}

func TestApplyTimeout(t *testing.T) {
	t.Parallel()
	r := newRig(t, `stage "step" "slow" { hang = true }`)
	r.opts = func(o *engine.ApplyOptions) { o.StageTimeout = 20 * time.Millisecond }
	res, st := r.apply(context.Background(), engine.PlanOptions{})
	want := map[string]string{"step.slow": "failed: it ran past the stage timeout of 20ms and was stopped"}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if statuses(st)["step.slow"] != state.StatusFailed || r.world.killedByHost() != 1 {
		t.Errorf("state %v, %d killed; want failed and 1", statuses(st), r.world.killedByHost())
	}
}

func TestApplyInterruptedBeforeStart(t *testing.T) {
	t.Parallel()
	r := newRig(t, `stage "step" "a" {}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, st := r.apply(ctx, engine.PlanOptions{})
	want := map[string]string{"step.a": "skipped: the apply was interrupted before it started"}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if st != nil || r.world.launchCount() != 0 {
		t.Errorf("state %v and %d launches after an apply that never started", st, r.world.launchCount())
	}
}

func TestApplyParallelismLimit(t *testing.T) {
	t.Parallel()
	src := ""
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		src += `stage "step" "` + n + `" { sleep = "20ms" }` + "\n"
	}
	r := newRig(t, src)
	r.opts = func(o *engine.ApplyOptions) { o.Parallelism = 2 }
	res, _ := r.apply(context.Background(), engine.PlanOptions{})
	if !res.OK() {
		t.Fatal(outcomes(res))
	}
	if r.world.peak > 2 {
		t.Errorf("%d stages ran at once, want at most 2", r.world.peak)
	}
}

func TestApplyGPUClaimsNeverOverlap(t *testing.T) {
	t.Parallel()
	r := newRig(t, `
hardware "a" { profile = "h200-x2" }
hardware "b" { profile = "h200-x2" }
stage "step" "a1" {
  hardware = hardware.a
  sleep    = "30ms"
}
stage "step" "a2" {
  hardware = hardware.a
  sleep    = "30ms"
}
stage "step" "b1" {
  hardware = hardware.b
  sleep    = "30ms"
}
stage "step" "a3" {
  gpus  = 1
  sleep = "30ms"
}
stage "step" "a4" {
  gpus  = 1
  sleep = "30ms"
}
stage "step" "cpu1" { sleep = "30ms" }
stage "step" "cpu2" { sleep = "30ms" }
`)
	r.opts = func(o *engine.ApplyOptions) { o.Parallelism = 8 }
	res, _ := r.apply(context.Background(), engine.PlanOptions{})
	if !res.OK() {
		t.Fatal(outcomes(res))
	}
	for _, pair := range [][2]string{{"a1", "a2"}, {"a3", "a4"}} {
		if r.world.overlap(pair[0], pair[1]) {
			t.Errorf("%s and %s claim the same GPUs but ran at the same time", pair[0], pair[1])
		}
	}
}

func TestOpenStateLockContention(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/s.json"
	first, err := engine.OpenState(path, "w")
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.OpenState(path, "w")
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "PID") {
		t.Errorf("second OpenState: %v; want ErrLocked naming the PID", err)
	}
	first.Close()
	again, err := engine.OpenState(path, "w")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.Close()
}

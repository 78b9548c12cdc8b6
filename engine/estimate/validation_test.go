package estimate

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/layout"
)

// TestValidations counts a run's validations: every so many steps and
// after the last step, which is validated once.
func TestValidations(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		steps, every, want int64
	}{
		"every 25 of 300":        {300, 25, 12},
		"every 25 of 310":        {310, 25, 13},
		"only at the end":        {300, 0, 1},
		"interval past the run":  {10, 25, 1},
		"no steps, none to time": {0, 25, 0},
	}
	got, want := map[string]int64{}, map[string]int64{}
	for name, tc := range tests {
		got[name], want[name] = validations(tc.steps, tc.every), tc.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("validations (-want +got):\n%s", diff)
	}
}

// TestValidationTime checks that the validations add the forward share of
// their micro-batches to the stage's duration and nothing to its step, and
// add to the peak only where their logits outgrow what training holds:
// the compiled lab shape's bf16 logits stay within its activations (so
// do every gpuflow trainer's: its training keeps at least as many bytes
// per logit); under plain PyTorch, whose training keeps 8 bytes per logit
// against the validation's eager 10, a one-sequence micro-batch with a
// vocabulary of 256,000 and full recomputation holds more at validation.
func TestValidationTime(t *testing.T) {
	t.Parallel()
	in := Input{Model: labShape(), Hardware: builtin("h200-x1"), Framework: FrameworkGpuflow, TrainSteps: 300,
		Layout: trainerLayout(1, 16, 64, false, layout.RecomputeNone)}
	without, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Validation = &Validation{Every: 25, Batches: 8}
	with, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	j, err := newJob(in)
	if err != nil {
		t.Fatal(err)
	}
	p := j.parts()
	micro := j.forwardShare(p.microCompute) * j.microTime(p.microCompute, j.hostTime())
	v := with.Validation
	if v == nil || v.Count != 12 || math.Abs(v.EachS/(8*4*micro)-1) > 1e-9 {
		t.Fatalf("validation %+v, want 12 of 8 batches x 4 micro-batches x %.4f s", v, micro)
	}
	if d := with.DurationS - without.DurationS; with.StepTimeS != without.StepTimeS || math.Abs(d/v.DurationS-1) > 1e-9 {
		t.Errorf("validations added %.2f s to the run and changed the step from %.4f to %.4f s; want their %.2f s and the same step",
			d, without.StepTimeS, with.StepTimeS, v.DurationS)
	}
	if v.AddedBytes != 0 || with.Memory.Total != without.Memory.Total {
		t.Errorf("compiled lab shape: validations add %d bytes (peak %d to %d); want none", v.AddedBytes, without.Memory.Total, with.Memory.Total)
	}
	wide := labShape()
	wide.Vocab = 256_000
	in = Input{Model: wide, Hardware: builtin("h200-x1"), Framework: FrameworkEager, TrainSteps: 10,
		Layout: trainerLayout(1, 1, 1, false, layout.RecomputeFull), Validation: &Validation{Batches: 1}}
	e, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if e.Validation.AddedBytes <= 0 {
		t.Errorf("plain PyTorch, vocabulary 256,000, micro-batch 1, full recompute: validations add %d bytes; want their logits' excess", e.Validation.AddedBytes)
	}
}

// TestLossLogitBytes: gpuflow's trainers, compiled or eager, take the
// loss in place (2 bytes a logit in a validation, 4 in training); the
// eager trainer as it ran with F.cross_entropy (Input.EagerFP32Loss)
// held fp32 copies in both, which the compiled trainer never took.
func TestLossLogitBytes(t *testing.T) {
	t.Parallel()
	type bytes struct {
		InPlace bool
		Logit   float64
	}
	tests := map[string]struct {
		framework string
		eagerFP32 bool
		want      bytes
	}{
		"compiled":                   {FrameworkGpuflow, false, bytes{true, trainerLogitBytes}},
		"eager":                      {FrameworkGpuflowEager, false, bytes{true, trainerLogitBytes}},
		"eager with F.cross_entropy": {FrameworkGpuflowEager, true, bytes{false, trainerEagerFP32LogitBytes}},
		"compiled, flag ignored":     {FrameworkGpuflow, true, bytes{true, trainerLogitBytes}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			j, err := newJob(Input{Model: labShape(), Hardware: builtin("h200-x1"), Framework: tc.framework, TrainSteps: 10,
				Layout: trainerLayout(1, 1, 1, false, layout.RecomputeNone), EagerFP32Loss: tc.eagerFP32})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, bytes{j.fw.LossInPlace, j.fw.LogitBytes}); diff != "" {
				t.Errorf("loss (-want +got):\n%s", diff)
			}
		})
	}
}

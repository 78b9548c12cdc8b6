package estimate

import "testing"

// A forward pass holds no gradients or optimizer states, takes about a
// third of a training step's compute, and runs through the same budget.
func TestForwardOnly(t *testing.T) {
	t.Parallel()
	in := sevenB()
	in.Layout.TP, in.Layout.DP, in.Layout.GlobalBatch = 1, 8, 64
	in.TrainTokens = 1e9
	train, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Forward = true
	fwd, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if fwd.Memory.Gradients != 0 || fwd.Memory.Optimizer != 0 || fwd.TrainableParams != 0 || fwd.Goodput != nil {
		t.Errorf("forward estimate keeps training state: %+v, trainable %d, goodput %v", fwd.Memory, fwd.TrainableParams, fwd.Goodput)
	}
	if fwd.Memory.Total >= train.Memory.Total {
		t.Errorf("forward memory %d not below training's %d", fwd.Memory.Total, train.Memory.Total)
	}
	if r := fwd.StepTimeS / train.ComputeS; r < 0.25 || r > 0.45 {
		t.Errorf("forward step %.3f s is %.2f of the training step's compute %.3f s; want about a third", fwd.StepTimeS, r, train.ComputeS)
	}
	if fwd.Steps != train.Steps || fwd.DurationS <= 0 || fwd.DurationS >= train.DurationS {
		t.Errorf("forward: %d steps in %.0f s; training %d steps in %.0f s", fwd.Steps, fwd.DurationS, train.Steps, train.DurationS)
	}
}

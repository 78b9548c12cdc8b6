package estimate

import (
	"math"
	"testing"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// TestLookupsLeaveExecutedWork: gpuflow's trainer on one stage without
// tensor parallelism executes no products for an untied input embedding
// or learned positions; everywhere else, and in the model FLOPs MFU is
// quoted in (training and forward-only alike), they stay.
func TestLookupsLeaveExecutedWork(t *testing.T) {
	t.Parallel()
	llama := preset("llama3.2-1b")
	untied := llama
	untied.TiedEmbeddings = false
	gpt := untied
	gpt.Activation = model.ActivationGELU
	gptTied := gpt
	gptTied.TiedEmbeddings = true
	h, v, s := float64(llama.Hidden), float64(llama.Vocab), float64(gpt.SeqLen)
	lora := &LoRA{Rank: 16, Targets: []string{"q", "v"}}
	cases := map[string]struct {
		shape     model.Shape
		framework string
		tp, pp    int
		lora      *LoRA
		lookups   float64 // parameters read, not multiplied
		perParam  float64 // FLOPs per token each costs in the count: 6, or 4 frozen under LoRA
	}{
		"gpuflow, untied, one GPU":       {untied, FrameworkGpuflow, 1, 1, nil, v * h, 6},
		"gpuflow, GELU, untied":          {gpt, FrameworkGpuflow, 1, 1, nil, v*h + s*h, 6},
		"gpuflow, GELU, tied":            {gptTied, FrameworkGpuflow, 1, 1, nil, s * h, 6},
		"gpuflow, tied":                  {llama, FrameworkGpuflow, 1, 1, nil, 0, 6},
		"gpuflow, untied, LoRA":          {untied, FrameworkGpuflow, 1, 1, lora, v * h, 4},
		"gpuflow, untied under TP":       {untied, FrameworkGpuflow, 2, 1, nil, 0, 6},
		"gpuflow, untied under PP":       {untied, FrameworkGpuflow, 1, 2, nil, 0, 6},
		"megatron, untied, one GPU":      {untied, FrameworkMegatron, 1, 1, nil, 0, 6},
		"gpuflow-eager, untied, one GPU": {untied, FrameworkGpuflowEager, 1, 1, nil, v * h, 6},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hw := builtin("h200-x1")
			if c.tp*c.pp > 1 {
				hw = builtin("nebius-h100-8")
			}
			in := Input{Model: c.shape, Hardware: hw, Framework: c.framework, LoRA: c.lora, Layout: layout.Layout{TP: c.tp, PP: c.pp, DP: 1, CP: 1, VP: 1,
				MicroBatch: 1, GlobalBatch: 4, Recompute: layout.RecomputeNone, Precision: hardware.PrecisionBF16}}
			j, err := newJob(in)
			if err != nil {
				t.Fatal(err)
			}
			f := j.flops
			if want := counts.ModelFLOPs(j.params, j.adapters, f.attention); math.Abs(f.model-want) > 1 {
				t.Errorf("model FLOPs %.6g per token, want the convention's %.6g", f.model, want)
			}
			if got, want := f.executed-f.model, -c.perParam*c.lookups; math.Abs(got-want) > 1 {
				t.Errorf("executed - model = %.4g FLOPs per token, want %.4g", got, want)
			}
			if got, want := f.forward-f.modelForward, -2*c.lookups; math.Abs(got-want) > 1 {
				t.Errorf("forward executed - model = %.4g FLOPs per token, want %.4g", got, want)
			}
		})
	}
}

// TestLookupsKeptUnderTPAndPP is why LookupsRead stops at one stage
// without tensor parallelism: every untied run of the trainer planned
// with its lookups counted as products and read by index; on one stage
// without TP reading them plans closer to what ran (on average and at
// worst), under TP or PP further.
func TestLookupsKeptUnderTPAndPP(t *testing.T) {
	t.Parallel()
	type errs struct{ multiplied, read []float64 }
	groups := map[string]*errs{"one stage, no TP": {}, "TP": {}, "PP": {}}
	for name, r := range trainerRuns(t) {
		l, s := r.in.Layout, r.in.Model
		if s.TiedEmbeddings || r.in.Framework != FrameworkGpuflow || r.in.LoRA != nil {
			continue
		}
		group := "one stage, no TP"
		switch {
		case l.TP > 1:
			group = "TP"
		case l.PP > 1:
			group = "PP"
		}
		j, err := newJob(r.in)
		if err != nil {
			t.Fatal(err)
		}
		j.flops = j.countFLOPs(0)
		multiplied := tokensOf(j)/r.tokensPerS - 1
		j.flops = j.countFLOPs(j.counts.Embedding + countShape(s).Positions())
		read := tokensOf(j)/r.tokensPerS - 1
		t.Logf("%-50s lookups multiplied %+6.1f%%, read %+6.1f%%", name, 100*multiplied, 100*read)
		g := groups[group]
		g.multiplied, g.read = append(g.multiplied, multiplied), append(g.read, read)
	}
	for name, g := range groups {
		mm, mr, wm, wr := meanAbs(g.multiplied), meanAbs(g.read), worstAbs(g.multiplied), worstAbs(g.read)
		t.Logf("%s: %d runs, mean |error| %.1f%% with the lookups multiplied, %.1f%% read; worst %.1f%% and %.1f%%",
			name, len(g.read), 100*mm, 100*mr, 100*wm, 100*wr)
		readBetter := mr < mm && wr <= wm
		if want := name == "one stage, no TP"; readBetter != want {
			t.Errorf("%s: reading the lookups plans better: %v, the rule says %v", name, readBetter, want)
		}
	}
}

// tokensOf is the job's planned tokens/s.
func tokensOf(j *job) float64 {
	e := &Estimate{}
	e.Memory = j.memory()
	j.time(e)
	return e.TokensPerS
}

func meanAbs(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += math.Abs(x)
	}
	return s / float64(len(xs))
}

func worstAbs(xs []float64) float64 {
	var w float64
	for _, x := range xs {
		w = math.Max(w, math.Abs(x))
	}
	return w
}

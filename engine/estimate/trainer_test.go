package estimate

import (
	"cmp"
	"encoding/json"
	"math"
	"os"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// trainerRun is one run of gpuflow's trainer on H200s (trainerRunsFile):
// its plan input and what it measured.
type trainerRun struct {
	in Input
	// call numbers the calls on the GPU machines in the order they ran:
	// the constants were fitted to the first call's runs, and each later
	// call checked them out of sample.
	call int
	// hardware is the run's profile: the host constants were fitted on
	// the H200 machines' hosts.
	hardware   string
	tokensPerS float64
	// peakBytes is peak reserved memory plus what the process held
	// outside PyTorch; allocatedBytes PyTorch's peak allocated.
	peakBytes, allocatedBytes float64
	// tpsTol and memTol replace the accuracy bar's 15% and 10% where the
	// accounting is known to miss (docs/estimator.md, "Known limits"), so
	// that a change that widens a miss still fails.
	tpsTol, memTol float64
}

// hostBoundTol is the tokens/s tolerance of the runs bound by the host
// that missed 15%: the host's speed moved between calls by more than that
// (U: 78,000-119,000 tokens/s over six calls; the lab model's time per
// micro-batch under TP was 72-79 ms in the sixth call and 113 ms in the
// seventh, docs/benchmarks-log.md), and the H100 machine's host ran the
// one-GPU lab and GPT-2 shapes 18-22% slower than the H200 machines' the
// host constants were fitted on, so no plan holds them to 15%.
// Y16 missed by 42%: the bound is its error, so that a change that
// widens the misses still fails.
const hostBoundTol = 0.43

// lastCallGatheringLogits is the last call whose trainer gathered the
// logits whole under TP; later trainers compute the loss on the shards.
const lastCallGatheringLogits = 7

// lastCallEagerFP32Loss is the last call whose eager trainer took its
// loss with F.cross_entropy; later ones run the trainer's own kernels.
const lastCallEagerFP32Loss = 17

// lastCallFSDP2OnOneGPU is the last call whose trainer ran FSDP2 on one
// GPU alone; later trainers run a bf16 copy of the model there.
const lastCallFSDP2OnOneGPU = 11

// lastCallFusedAdamWAlone is the last call whose trainer stepped fused
// AdamW on one GPU alone; later trainers step adamw.py's kernel, which
// also writes the compute copy's weights.
const lastCallFusedAdamWAlone = 22

// labShape is workloads/h200-lab.hcl's model.
func labShape() model.Shape {
	return model.Shape{Layers: 12, Hidden: 768, FFNHidden: 2048, Heads: 12, KVHeads: 4, Vocab: 50304, SeqLen: 1024,
		TiedEmbeddings: true, Activation: model.ActivationSwiGLU}
}

func trainerLayout(dp, micro, global int, fsdp bool, recompute string) layout.Layout {
	return layout.Layout{TP: 1, PP: 1, CP: 1, DP: dp, VP: 1, FSDP: fsdp, MicroBatch: micro, GlobalBatch: global,
		Recompute: recompute, Precision: hardware.PrecisionBF16}
}

// trainerRunsFile holds the measured runs: each run's plan input and what
// it measured, grouped by the call on the GPU machines that ran it.
const trainerRunsFile = "testdata/trainer-runs.json"

// trainerRuns reads trainerRunsFile, keyed by the runs' names (as
// docs/benchmarks.md and docs/benchmarks-log.md name them).
func trainerRuns(t testing.TB) map[string]trainerRun {
	t.Helper()
	b, err := os.ReadFile(trainerRunsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Name       string        `json:"name"`
			Call       int           `json:"call"`
			Framework  string        `json:"framework"`
			Hardware   string        `json:"hardware"`
			Model      model.Shape   `json:"model"`
			Layout     layout.Layout `json:"layout"`
			LoRA       *LoRA         `json:"lora"`
			TokensPerS float64       `json:"tokens_per_s"`
			Peak       float64       `json:"peak_memory_bytes"`
			Allocated  float64       `json:"allocated_bytes"`
			HostBound  bool          `json:"host_bound"`
			// TPSTolerance: a known miss's measured error (docs/estimator.md,
			// "Known limits"), so that a change that widens it fails.
			TPSTolerance float64 `json:"tokens_per_s_tolerance"`
			// PeakTolerance: the same for peak memory.
			PeakTolerance float64 `json:"peak_memory_tolerance"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", trainerRunsFile, err)
	}
	out := map[string]trainerRun{}
	for _, r := range doc.Runs {
		run := trainerRun{in: Input{Model: r.Model, Layout: r.Layout, Hardware: builtin(r.Hardware), Framework: r.Framework, LoRA: r.LoRA},
			call: r.Call, hardware: r.Hardware, tokensPerS: r.TokensPerS, peakBytes: r.Peak, allocatedBytes: r.Allocated, memTol: r.PeakTolerance}
		if r.HostBound {
			run.tpsTol = hostBoundTol
		}
		run.tpsTol = cmp.Or(r.TPSTolerance, run.tpsTol)
		run.in.GatheredLogits = r.Call <= lastCallGatheringLogits
		run.in.EagerFP32Loss = r.Call <= lastCallEagerFP32Loss
		run.in.FSDP2OnOneGPU = r.Call <= lastCallFSDP2OnOneGPU
		run.in.FusedAdamWAlone = r.Call <= lastCallFusedAdamWAlone
		out[r.Name] = run
	}
	return out
}

// TestTrainerRuns holds the gpuflow trainer's accounting to the
// accuracy bar on every measured run: peak memory within 10%, tokens/s within 15%
// (the known misses within their measured error);
// and the model states, gathered weights (without a pipeline) and activations
// within 15% of PyTorch's peak allocated, so the fitted reserve does not
// hide a wrong count.
func TestTrainerRuns(t *testing.T) {
	t.Parallel()
	for name, r := range trainerRuns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, err := Compute(r.in)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("tokens/s %.0f vs %.0f (%+.1f%%), peak %.2f vs %.2f GiB (%+.1f%%)",
				e.TokensPerS, r.tokensPerS, 100*(e.TokensPerS/r.tokensPerS-1),
				float64(e.Memory.Total)/gib, r.peakBytes/gib, 100*(float64(e.Memory.Total)/r.peakBytes-1))
			tpsTol, memTol := cmp.Or(r.tpsTol, 0.15), cmp.Or(r.memTol, 0.10)
			if !within(e.TokensPerS, r.tokensPerS, tpsTol) {
				t.Errorf("tokens/s %.0f, measured %.0f (tolerance %.0f%%)", e.TokensPerS, r.tokensPerS, 100*tpsTol)
			}
			m := e.Memory
			if tensors := float64(m.Weights+m.Gradients+m.Optimizer+m.Activations) + gatheredBytes(t, r.in); !within(tensors, r.allocatedBytes, max(0.15, memTol)) {
				t.Errorf("states, gathered weights and activations %.2f GiB, measured peak allocated %.2f GiB (tolerance %.0f%%)", tensors/gib, r.allocatedBytes/gib, 100*max(0.15, memTol))
			}
			if !within(float64(e.Memory.Total), r.peakBytes, memTol) {
				t.Errorf("peak memory %.2f GiB, measured %.2f GiB (tolerance %.0f%%)", float64(e.Memory.Total)/gib, r.peakBytes/gib, 100*memTol)
			}
		})
	}
}

// gatheredBytes is what the estimate holds of FSDP2's gathered bf16
// weights without a pipeline: PyTorch allocates them, though the plan
// shows them as other memory (a 7B model's are 15 GB, a 1B's 2.5). With
// a pipeline they are left out: counted, XS (PP2 x TP2) would come out
// 16% above its allocated peak while its total is within 3%.
func gatheredBytes(t *testing.T, in Input) float64 {
	t.Helper()
	if in.Layout.PP > 1 {
		return 0
	}
	j, err := newJob(in)
	if err != nil {
		t.Fatal(err)
	}
	return j.gathered(j.rank(0))
}

// TestTrainerAccounting checks the mechanisms behind gpuflow's trainer
// accounting, each against the case without it.
func TestTrainerAccounting(t *testing.T) {
	t.Parallel()
	b1 := preset("llama3.2-1b")
	b1.SeqLen = 4096
	at := func(s model.Shape, l layout.Layout, lora *LoRA) *Estimate {
		e, err := Compute(Input{Model: s, Layout: l, Hardware: builtin("h200-x4"), Framework: FrameworkGpuflow, LoRA: lora})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	fsdp := at(b1, trainerLayout(4, 4, 16, true, layout.RecomputeNone), nil)
	zero1 := trainerLayout(4, 4, 16, false, layout.RecomputeNone)
	zero1.ZeRO = 1
	if z := at(b1, zero1, nil); z.Memory.Weights != fsdp.Memory.Weights || z.Memory.Other <= fsdp.Memory.Other {
		t.Errorf("ZeRO 1 under FSDP2: weights %d (FSDP %d), other %d (FSDP %d); want sharded weights and every layer gathered",
			z.Memory.Weights, fsdp.Memory.Weights, z.Memory.Other, fsdp.Memory.Other)
	}
	if two := at(b1, trainerLayout(4, 2, 32, true, layout.RecomputeNone), nil); fsdp.Memory.Gradients != 0 || two.Memory.Gradients == 0 {
		t.Errorf("gradients at the peak: %d with one micro-batch, %d with two; want none, then some", fsdp.Memory.Gradients, two.Memory.Gradients)
	}
	lab := trainerLayout(1, 16, 16, false, layout.RecomputeNone)
	full := at(labShape(), lab, nil)
	attention := at(labShape(), lab, &LoRA{Rank: 16, Targets: []string{"q", "k", "v", "o"}})
	all := at(labShape(), lab, &LoRA{Rank: 16, Targets: []string{"all-linear"}})
	if attention.Memory.Activations >= all.Memory.Activations || all.Memory.Activations != full.Memory.Activations {
		t.Errorf("activations: LoRA on attention %d, on all linear layers %d, full training %d; want the first lowest, the others equal",
			attention.Memory.Activations, all.Memory.Activations, full.Memory.Activations)
	}
	one := func(recompute string) *Estimate { return at(b1, trainerLayout(1, 8, 8, true, recompute), nil) }
	none, selective, recomputed := one(layout.RecomputeNone), one(layout.RecomputeSelective), one(layout.RecomputeFull)
	if !(recomputed.Memory.Activations < selective.Memory.Activations && selective.Memory.Activations < none.Memory.Activations) {
		t.Errorf("activations: full recompute %d, selective %d, none %d; want them rising in that order",
			recomputed.Memory.Activations, selective.Memory.Activations, none.Memory.Activations)
	}
	if none.StepTimeS != selective.StepTimeS || recomputed.StepTimeS <= none.StepTimeS {
		t.Errorf("step time: none %.3f s, selective %.3f s, full %.3f s; want selective as fast as none (no product rerun), full slower",
			none.StepTimeS, selective.StepTimeS, recomputed.StepTimeS)
	}
	// 2 (input) + 2 + 4*8/32 (q, k, v) + 2 (attention) + 4*8192/2048 (gate,
	// up) + 4 (o and down outputs) = 27 sbh.
	if got, want := productActivations(b1, 4096, 1, 1, false), 27.0*4096*2048; got != want {
		t.Errorf("productActivations = %.0f, want %.0f (27 sbh)", got, want)
	}
	accumulating := at(b1, trainerLayout(4, 4, 32, true, layout.RecomputeNone), nil)
	if pool := float64(fsdp.Memory.Optimizer) / 2; float64(fsdp.Memory.Other-accumulating.Memory.Other) != pool {
		t.Errorf("other: %d with one micro-batch, %d accumulating; want the gradient pool (%.0f) only in the first",
			fsdp.Memory.Other, accumulating.Memory.Other, pool)
	}
	pipelined := trainerLayout(2, 2, 16, true, layout.RecomputeNone)
	pipelined.PP = 2
	if p := at(b1, pipelined, nil); p.Memory.Gradients != p.Memory.Optimizer {
		t.Errorf("PP2 x FSDP2: gradients %d, optimizer %d; want the stage's whole fp32 gradients (half the sharded optimizer's 8 bytes x 2 ranks)",
			p.Memory.Gradients, p.Memory.Optimizer)
	}
	if full.HostWaitS <= 0 || fsdp.HostWaitS != 0 {
		t.Errorf("host wait: %.3f s for the 114M model, %.3f s for the 1B shape; want some, then none", full.HostWaitS, fsdp.HostWaitS)
	}
}

// TestFP8Products checks what gpuflow's trainer adds to an fp8 step: the
// scaling's passes over memory (fp8Traffic, counted from the products'
// widths) and the output layer's products at bf16.
func TestFP8Products(t *testing.T) {
	t.Parallel()
	wide := preset("llama3-8b")
	wide.Layers, wide.SeqLen = 20, 4096
	gpt := preset("gpt2-124m")
	for name, tc := range map[string]struct {
		shape   model.Shape
		in, out float64
	}{
		// q, k, v, gate, up read 4096; o 4096; down 14336. Out: q 4096,
		// k and v 1024, o 4096, gate and up 14336, down 4096.
		"llama3-8b, SwiGLU": {wide, 6*4096 + 14336, 3*4096 + 2*1024 + 2*14336},
		"gpt2, GELU":        {gpt, 5*768 + 3072, 4*768 + 3072 + 768},
	} {
		in, out := productWidths(tc.shape)
		if diff := gocmp.Diff([2]float64{tc.in, tc.out}, [2]float64{in, out}); diff != "" {
			t.Errorf("%s: productWidths (-want +got):\n%s", name, diff)
		}
	}
	l := trainerLayout(1, 2, 2, true, layout.RecomputeNone)
	l.Precision = hardware.PrecisionFP8
	j, err := newJob(Input{Model: wide, Layout: l, Hardware: builtin("h200-x1"), Framework: FrameworkGpuflow})
	if err != nil {
		t.Fatal(err)
	}
	// 8192 tokens x 20 layers x (7 x 38912 + 7 x 43008) bytes, and 20
	// layers' 218.1M weights x 7 bytes, at 88% of 4.8 TB/s: 29.5 ms.
	bytes := 8192*20*7*(38912.0+43008) + 20*218_112_000*7.0
	if want, got := bytes/j.hbm(), j.fp8Traffic(); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("fp8Traffic = %.4f s, want %.4f s", got, want)
	}
	without := j.microCompute() - j.fp8Traffic()
	j.fw.FP8HeadBF16 = false
	head := 6 * 128256 * 4096.0 * 4096 * 2
	if got, want := without-(j.microCompute()-j.fp8Traffic()), head/j.rate(hardware.PrecisionBF16)-head/j.rate(hardware.PrecisionFP8); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("the output layer at bf16 adds %.4f s, want %.4f s", got, want)
	}
}

// TestFP8LoRA checks LoRA over gpuflow's fp8 frozen base: the base's
// products (forward and input gradient) at the fp8 rate, the frozen
// output layer's (4 V h) and the adapters' at bf16; the scaling's traffic
// without a weight gradient's operands, each weight cast again for the
// backward; and the memory of LoRA over bf16, since no fp8 copy of the
// frozen weights is kept.
func TestFP8LoRA(t *testing.T) {
	t.Parallel()
	wide := preset("llama3-8b")
	wide.Layers, wide.SeqLen = 20, 4096
	l := trainerLayout(1, 2, 2, true, layout.RecomputeNone)
	l.Precision = hardware.PrecisionFP8
	in := Input{Model: wide, Layout: l, Hardware: builtin("h200-x1"), Framework: FrameworkGpuflow,
		LoRA: &LoRA{Rank: 16, Targets: []string{"all-linear"}}}
	j, err := newJob(in)
	if err != nil {
		t.Fatal(err)
	}
	// 8192 tokens x 20 layers x (5 x 38912 input + 5 x 43008 gradient)
	// bytes, and 20 layers' 218.1M weights x (5 + 3 + 2) bytes.
	bytes := 8192*20*5*(38912.0+43008) + 20*218_112_000*10.0
	if want, got := bytes/j.hbm(), j.fp8Traffic(); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("fp8Traffic = %.4f s, want %.4f s", got, want)
	}
	if want, got := 4*128256*4096.0+6*j.adapters, j.fp8KeptAtBF16(); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("FLOPs per token kept at bf16 = %.4g, want %.4g (the frozen output layer and the adapters)", got, want)
	}
	fp8, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Layout.Precision = hardware.PrecisionBF16
	bf16, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(bf16.Memory, fp8.Memory); diff != "" {
		t.Errorf("memory of LoRA over fp8 against bf16 (-bf16 +fp8):\n%s", diff)
	}
	if fp8.StepTimeS >= bf16.StepTimeS || fp8.StepTimeS <= bf16.StepTimeS/2 {
		t.Errorf("fp8 LoRA step %.3f s against bf16 LoRA %.3f s; want faster but less than twice", fp8.StepTimeS, bf16.StepTimeS)
	}
}

// TestFP8Activations checks what a compiled fp8 block keeps: bf16's
// activations less the two norms' outputs (2 bytes each) and the down
// projection's input (2 x ffn / hidden), times the trainer's activation
// coefficient, for every layer (scripts/device/block_memory.py measured
// 12.0 and 11.0 bytes per token x hidden less at the 1B and 8B-wide
// shapes). Eager blocks, tensor parallelism and LoRA keep bf16's count.
func TestFP8Activations(t *testing.T) {
	t.Parallel()
	oneB := model.Shape{Layers: 16, Hidden: 2048, FFNHidden: 8192, Heads: 32, KVHeads: 8, Vocab: 128256, SeqLen: 4096,
		TiedEmbeddings: true, Activation: model.ActivationSwiGLU}
	tp2 := trainerLayout(1, 8, 8, true, layout.RecomputeNone)
	tp2.TP = 2
	lora := &LoRA{Rank: 16, Targets: []string{"all-linear"}}
	perToken := func(ffn float64) float64 { return (4 + 2*ffn/2048) * 2048 }
	for name, tc := range map[string]struct {
		framework string
		layout    layout.Layout
		lora      *LoRA
		less      float64 // bytes per token and layer below bf16's, before the coefficient
	}{
		"compiled":               {FrameworkGpuflow, trainerLayout(1, 8, 8, true, layout.RecomputeNone), nil, perToken(8192)},
		"eager":                  {FrameworkGpuflowEager, trainerLayout(1, 8, 8, true, layout.RecomputeNone), nil, 0},
		"tensor parallel":        {FrameworkGpuflow, tp2, nil, 0},
		"LoRA over the fp8 base": {FrameworkGpuflow, trainerLayout(1, 8, 8, true, layout.RecomputeNone), lora, 0},
		"full recomputation":     {FrameworkGpuflow, trainerLayout(1, 8, 8, true, layout.RecomputeFull), nil, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hw := builtin("h200-x1")
			if tc.layout.TP > 1 {
				hw = builtin("h200-x4")
			}
			in := Input{Model: oneB, Layout: tc.layout, Hardware: hw, Framework: tc.framework, LoRA: tc.lora}
			bf16, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			in.Layout.Precision = hardware.PrecisionFP8
			fp8, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			j, err := newJob(in)
			if err != nil {
				t.Fatal(err)
			}
			tokens := float64(tc.layout.MicroBatch * oneB.SeqLen)
			want := j.coeff * tc.less * tokens * float64(oneB.Layers) / float64(tc.layout.TP)
			if got := float64(bf16.Memory.Activations - fp8.Memory.Activations); math.Abs(got-want) > 2 {
				t.Errorf("fp8 keeps %.4g bytes less than bf16, want %.4g", got, want)
			}
		})
	}
}

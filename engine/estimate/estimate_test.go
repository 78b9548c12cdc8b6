package estimate

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// TestCount checks parameter counts against the published models'
// config.json totals. Exact, except Qwen2, whose q/k/v biases (28 layers
// x 4,608) the Llama-style count leaves out.
func TestCount(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		want float64
		tol  float64
	}{
		"gpt2-124m":   {124_439_808, 0},
		"llama3.2-1b": {1_235_814_400, 0},
		"llama2-7b":   {6_738_415_616, 0},
		"llama3-8b":   {8_030_261_248, 0},
		"qwen2-7b":    {7_615_616_512, 2e-5},
		"llama3-70b":  {70_553_706_496, 0},
		"llama3-405b": {405_853_388_800, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := preset(name)
			if name == "gpt2-124m" {
				s.SeqLen = 1024 // GPT-2's position table
			}
			got := Count(s).Total(s.Layers)
			if !within(got, tc.want, tc.tol) {
				t.Errorf("%s: %.0f parameters, published %.0f", name, got, tc.want)
			}
		})
	}
}

// TestFLOPsMatchMeasuredMFU recomputes the reference measurements' MFU column (model
// FLOPs 6N+12Lhs, LoRA 4N, of 989 TFLOP/s) from its tokens/s with our
// FLOP count. Tolerance 0.1 percentage point (the table's rounding); the
// LoRA row also counts the adapters' 6*N_adapter, which the table's
// "4N count" appears to include (29.2% without them).
func TestFLOPsMatchMeasuredMFU(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		seq        int
		tokensPerS float64
		lora       bool
		wantMFU    float64
	}{
		"H100 4096x1":   {4096, 33557, false, 0.306},
		"H100 8192x1":   {8192, 35567, false, 0.383},
		"H200 4096x4":   {4096, 44339, false, 0.405},
		"H200 LoRA r16": {4096, 44000, true, 0.294},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := preset("llama3.2-1b")
			s.SeqLen = tc.seq
			var adapters float64
			if tc.lora {
				per, err := adapterParamsPerLayer(s, LoRA{Rank: 16, Targets: []string{"all-linear"}})
				if err != nil {
					t.Fatal(err)
				}
				adapters = per * float64(s.Layers)
			}
			f := countFLOPs(flopsInput{params: Count(s).Total(s.Layers), adapters: adapters, attention: counts.AttentionFLOPs(countShape(s)), recompute: layout.RecomputeNone})
			got := tc.tokensPerS * f.model / 989e12
			if math.Abs(got-tc.wantMFU) > 0.001 {
				t.Errorf("MFU %.4f, the reference measurements say %.3f", got, tc.wantMFU)
			}
		})
	}
}

func TestInFlight(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		pp, vp, micro int
		want          float64
	}{
		"no pipeline":              {1, 1, 8, 1},
		"1F1B holds pp":            {4, 1, 16, 4},
		"few micro-batches":        {4, 1, 2, 2},
		"interleaved adds a share": {4, 5, 64, 4 * (1 + 3.0/20)},
	}
	for name, tc := range tests {
		if got := inFlight(tc.pp, tc.vp, tc.micro); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %g micro-batches in flight, want %g", name, got, tc.want)
		}
	}
}

// sevenB is the reference 7B recipe on one 8-GPU node, on Megatron-LM.
func sevenB() Input {
	return Input{Model: preset("llama2-7b"), Hardware: builtin("dell-xe9780-b300"), Framework: FrameworkMegatron,
		Layout: layout.Layout{TP: 2, PP: 1, DP: 4, CP: 1, VP: 1, MicroBatch: 4, GlobalBatch: 256,
			Recompute: layout.RecomputeSelective, SequenceParallel: true, Precision: hardware.PrecisionBF16}}
}

func rules(fs []layout.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Severity+" "+f.Rule)
	}
	return out
}

func TestFindings(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		edit func(*Input)
		want []string
	}{
		"reference recipe is clean": {edit: func(*Input) {}},
		"over capacity": {edit: func(in *Input) { in.Layout.MicroBatch = 32 },
			want: []string{"error memory-over-100"}},
		"nearly full": {edit: func(in *Input) { in.Layout.MicroBatch, in.Layout.GlobalBatch, in.Layout.ZeRO = 18, 288, 1 },
			want: []string{"warning memory-over-90"}},
		"tp over nvl72 nodes": {edit: func(in *Input) {
			in.Hardware = builtin("gb200-nvl72")
			in.Model = preset("llama3-70b")
			in.Layout.TP, in.Layout.DP, in.Layout.MicroBatch, in.Layout.GlobalBatch, in.Layout.ZeRO = 8, 9, 1, 288, 1
		}, want: []string{"warning tp-across-nodes"}},
		"deep pipeline, few micro-batches": {edit: func(in *Input) {
			in.Layout.PP, in.Layout.DP, in.Layout.GlobalBatch = 4, 1, 8
		}, want: []string{"warning bubble-over-20"}},
		"data parallel over thin ethernet": {edit: func(in *Input) {
			in.Hardware = builtin("nebius-h100-8")
			in.Hardware.Nodes = 4
			in.Hardware.Network = hardware.Network{Kind: hardware.NetworkEthernet, NICsPerNode: 1, GbpsPerNIC: 25, LatencyS: 20e-6}
			in.Layout.TP, in.Layout.DP, in.Layout.MicroBatch, in.Layout.GlobalBatch = 2, 16, 1, 16
		}, want: []string{"warning dp-on-network-no-overlap"}},
		"gpuflow's trainer bound by the host": {edit: func(in *Input) {
			in.Framework = FrameworkGpuflow
			in.Model = labShape()
			in.Model.TiedEmbeddings = false
			in.Layout.TP, in.Layout.DP, in.Layout.SequenceParallel, in.Layout.MicroBatch, in.Layout.GlobalBatch = 2, 4, true, 2, 64
		}, want: []string{"warning host-bound"}},
		"gpuflow's trainer asked to shard one GPU": {edit: func(in *Input) {
			in.Framework = FrameworkGpuflow
			in.Hardware = builtin("h200-x1")
			in.Model = labShape()
			in.Layout.TP, in.Layout.DP, in.Layout.FSDP, in.Layout.MicroBatch, in.Layout.GlobalBatch = 1, 1, true, 64, 64
		}, want: []string{"warning sharding-on-one-gpu"}},
		"the same on two GPUs shards": {edit: func(in *Input) {
			in.Framework = FrameworkGpuflow
			in.Hardware = builtin("h200-x2")
			in.Model = labShape()
			in.Layout.TP, in.Layout.DP, in.Layout.FSDP, in.Layout.MicroBatch, in.Layout.GlobalBatch = 1, 2, true, 64, 128
		}},
		"tensor parallel over pcie": {edit: func(in *Input) {
			in.Hardware.Interconnect = hardware.Interconnect{Kind: "pcie", BytesPerS: 32e9, LatencyS: 5e-6}
			in.Layout.TP, in.Layout.DP, in.Layout.MicroBatch, in.Layout.GlobalBatch = 8, 1, 1, 64
		}, want: []string{"warning tp-comm-heavy"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := sevenB()
			tc.edit(&in)
			e, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rules(e.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range e.Findings {
				if !strings.HasSuffix(f.Message, ".") || f.Field == "" {
					t.Errorf("%s: message %q or field %q incomplete", f.Rule, f.Message, f.Field)
				}
			}
		})
	}
}

// TestMonotone checks directions any correct model must respect.
func TestMonotone(t *testing.T) {
	t.Parallel()
	at := func(edit func(*Input)) *Estimate {
		in := sevenB()
		edit(&in)
		e, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	base := at(func(*Input) {})
	for stage := 1; stage <= 3; stage++ {
		prev := at(func(in *Input) { in.Layout.ZeRO = stage - 1 })
		cur := at(func(in *Input) { in.Layout.ZeRO = stage })
		if cur.Memory.Weights+cur.Memory.Gradients+cur.Memory.Optimizer >= prev.Memory.Weights+prev.Memory.Gradients+prev.Memory.Optimizer {
			t.Errorf("ZeRO %d does not shrink model states below ZeRO %d", stage, stage-1)
		}
	}
	full := at(func(in *Input) { in.Layout.Recompute = layout.RecomputeFull })
	if full.Memory.Activations >= base.Memory.Activations || full.StepTimeS <= base.StepTimeS {
		t.Errorf("full recompute: activations %d vs %d, step %.3f vs %.3f; want less memory, more time",
			full.Memory.Activations, base.Memory.Activations, full.StepTimeS, base.StepTimeS)
	}
	if full.MFU >= base.MFU {
		t.Errorf("MFU counts recomputation: %.3f with full recompute, %.3f without", full.MFU, base.MFU)
	}
	fp8 := at(func(in *Input) { in.Layout.Precision = hardware.PrecisionFP8 })
	if fp8.StepTimeS >= base.StepTimeS || fp8.StepTimeS <= base.StepTimeS/2 {
		t.Errorf("fp8 step %.3f s against bf16 %.3f s; want faster but less than twice", fp8.StepTimeS, base.StepTimeS)
	}
	cp := at(func(in *Input) { in.Layout.CP, in.Layout.DP, in.Layout.GlobalBatch = 2, 2, 128 })
	if cp.Memory.Activations >= base.Memory.Activations {
		t.Error("context parallelism does not shrink activations")
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	in := sevenB()
	in.TrainTokens = 1e9
	e, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	wantSteps := int64(math.Ceil(1e9 / (256 * 4096)))
	hours := float64(wantSteps) * e.StepTimeS / 3600
	got := []float64{float64(e.Steps), e.DurationS, e.CostUSD, e.EnergyKWh}
	want := []float64{float64(wantSteps), hours * 3600, 8 * hours * 6.5, 8 * 0.7 * hours}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return within(a, b, 1e-9) })); diff != "" {
		t.Errorf("steps, duration, cost, energy (-want +got):\n%s", diff)
	}
	in.TrainTokens, in.TrainSteps = 0, 10
	if e, _ := Compute(in); e.Steps != 10 {
		t.Errorf("a 10-step budget gave %d steps", e.Steps)
	}
}

func TestCalibration(t *testing.T) {
	t.Parallel()
	in := sevenB()
	plain, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Calibrated) != 0 {
		t.Errorf("no calibration yet lists %v as calibrated", plain.Calibrated)
	}
	f := calibration.New()
	for _, err := range []error{
		f.RecordGEMM("dell-xe9780-b300", "bf16", 0.5),
		f.RecordBusBW("dell-xe9780-b300", "nvlink", 100),
		f.RecordActivationCoefficient("dell-xe9780-b300", FrameworkMegatron, 2),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	in.Calibration = f.For("dell-xe9780-b300")
	cal, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"activation_coefficient", "busbw.nvlink", "gemm_efficiency.bf16"}
	if diff := cmp.Diff(want, cal.Calibrated); diff != "" {
		t.Errorf("calibrated (-want +got):\n%s", diff)
	}
	if cal.StepTimeS <= plain.StepTimeS || cal.Memory.Activations <= plain.Memory.Activations {
		t.Error("slower GEMMs and links and a larger coefficient did not raise step time and activations")
	}
	run := calibration.Run{Key: calibration.RunKey(FrameworkMegatron, in.LoRA.Key(), in.Model, in.Layout), TokensPerS: 12345, PeakMemoryBytes: 60 << 30}
	if err := f.RecordRun("dell-xe9780-b300", run); err != nil {
		t.Fatal(err)
	}
	in.TrainSteps = 100
	measured, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{measured.TokensPerS, measured.Memory.Total, measured.DurationS}
	wantFig := []any{12345.0, int64(60 << 30), 100 * 256 * 4096 / 12345.0}
	if diff := cmp.Diff(wantFig, got); diff != "" {
		t.Errorf("measured run not used (-want +got):\n%s", diff)
	}
}

func TestComputeRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		edit func(*Input)
		want string
	}{
		"no hardware":             {func(in *Input) { in.Hardware = nil }, "no hardware"},
		"zero tp":                 {func(in *Input) { in.Layout.TP = 0 }, "positive"},
		"empty model":             {func(in *Input) { in.Model = model.Shape{} }, "non-positive"},
		"too many GPUs":           {func(in *Input) { in.Layout.DP = 8 }, "needs 16 GPUs"},
		"fp8 on pcie GPU":         {func(in *Input) { in.Layout.Precision = "fp8"; in.Hardware.GPU.TFLOPS = map[string]float64{"bf16": 100} }, "no dense fp8"},
		"unknown framework":       {func(in *Input) { in.Framework = "jax" }, "unknown training framework"},
		"bad LoRA target":         {func(in *Input) { in.LoRA = &LoRA{Rank: 8, Targets: []string{"qkv"}} }, "not a linear layer"},
		"zero LoRA rank":          {func(in *Input) { in.LoRA = &LoRA{Targets: []string{"q"}} }, "rank"},
		"more chunks than layers": {func(in *Input) { in.Layout.PP, in.Layout.VP, in.Layout.DP = 2, 32, 2 }, "pipeline chunks"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := sevenB()
			tc.edit(&in)
			_, err := Compute(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	in := sevenB()
	in.TrainTokens = 1e10
	a, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Compute(in)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
}

// TestExpectedMax checks Blom's approximation against the exact expected
// maximum of n standard normal draws (Harter's tables).
func TestExpectedMax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n         int
		want, tol float64
	}{
		{1, 0, 0},
		{2, 0.5642, 0.05},
		{4, 1.0294, 0.02},
		{8, 1.4236, 0.01},
		{16, 1.7660, 0.01},
	} {
		if got := expectedMax(tc.n); math.Abs(got-tc.want) > tc.tol*tc.want {
			t.Errorf("expectedMax(%d) = %.4f, want %.4f within %.0f%%", tc.n, got, tc.want, 100*tc.tol)
		}
	}
}

// all-linear adapts every linear layer a block has: seven in a Llama,
// six in a GPT-2, whose MLP has no gate. Under tensor parallelism each
// adapted matrix keeps one of its two factors whole on every rank.
func TestAdaptedMatrices(t *testing.T) {
	t.Parallel()
	for name, want := range map[string][]string{
		"llama3-8b": {"down", "gate", "k", "o", "q", "up", "v"},
		"gpt2-124m": {"down", "k", "o", "q", "up", "v"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := slices.Sorted(maps.Keys(adaptedMatrices(preset(name), []string{"all-linear"})))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("adapted matrices (-want +got):\n%s", diff)
			}
		})
	}
}

package autolayout

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

func builtin(t testing.TB, name string, nodes int) *hardware.Profile {
	t.Helper()
	hw, err := hardware.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if nodes > 0 {
		hw.Nodes = nodes
	}
	return hw
}

func preset(t testing.TB, name string) model.Shape {
	t.Helper()
	s, err := model.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sevenB is the reference 7B pre-train: one XE9780 (8x B300), seq 4096,
// global batch 256, FP8; the guide's hand layout is TP2 DP4, micro 4.
func sevenB(t testing.TB) Request {
	s := preset(t, "llama2-7b")
	return Request{Model: s, Hardware: builtin(t, "dell-xe9780-b300", 0), GlobalBatch: 256, Precision: hardware.PrecisionFP8}
}

func TestSearchBeatsTheHandLayout(t *testing.T) {
	t.Parallel()
	r := sevenB(t)
	res, err := Search(r)
	if err != nil {
		t.Fatal(err)
	}
	hand, err := estimate.Compute(estimate.Input{Model: r.Model, Hardware: r.Hardware, Layout: layout.Layout{
		TP: 2, PP: 1, DP: 4, CP: 1, VP: 1, MicroBatch: 4, GlobalBatch: 256,
		Recompute: layout.RecomputeSelective, SequenceParallel: true, Precision: hardware.PrecisionFP8}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choice.Estimate.TokensPerS; got < hand.TokensPerS {
		t.Errorf("search chose %+v at %.0f tokens/s, below the guide's TP2 DP4 at %.0f", res.Choice.Layout, got, hand.TokensPerS)
	}
	checkResult(t, r, res)
}

// checkResult checks what every result must satisfy.
func checkResult(t *testing.T, r Request, res *Result) {
	t.Helper()
	if len(res.RunnersUp) != RunnersUp {
		t.Errorf("%d runners-up, want %d", len(res.RunnersUp), RunnersUp)
	}
	all := append([]Candidate{res.Choice}, res.RunnersUp...)
	s := &search{objective: res.Objective}
	for i, c := range all {
		if fs := layout.Validate(c.Layout, r.Model, r.Hardware, c.Layout.WorldSize()); layout.Errors(fs) {
			t.Errorf("candidate %d breaks rules: %v", i, fs)
		}
		if c.Estimate.Memory.Total > c.Estimate.MemoryCapacityBytes {
			t.Errorf("candidate %d does not fit: %d of %d bytes", i, c.Estimate.Memory.Total, c.Estimate.MemoryCapacityBytes)
		}
		if i > 0 && s.score(c) > s.score(all[i-1]) {
			t.Errorf("candidate %d scores above candidate %d", i, i-1)
		}
		if (i == 0) != (c.Reason == "") {
			t.Errorf("candidate %d reason %q", i, c.Reason)
		}
	}
	if res.Fitting > res.Considered || res.Fitting < len(all) {
		t.Errorf("fitting %d of %d considered", res.Fitting, res.Considered)
	}
}

func TestSearchIsDeterministic(t *testing.T) {
	t.Parallel()
	a, err := Search(sevenB(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Search(sevenB(t))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two searches differ:\n%s", diff)
	}
}

func TestSearchCost(t *testing.T) {
	t.Parallel()
	r := Request{Model: preset(t, "llama3.2-1b"), Hardware: builtin(t, "nebius-h100-8", 2), GlobalBatch: 64,
		Framework: estimate.FrameworkEager, Objective: ObjectiveCost}
	res, err := Search(r)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, r, res)
	r.Objective = ObjectiveThroughput
	fast, err := Search(r)
	if err != nil {
		t.Fatal(err)
	}
	if fast.Choice.Layout.WorldSize() != 16 {
		t.Errorf("throughput search used %d of 16 GPUs", fast.Choice.Layout.WorldSize())
	}
	if res.Choice.Estimate.TokensPerSPerGPU < fast.Choice.Estimate.TokensPerSPerGPU {
		t.Errorf("cost search's choice makes %.0f tokens per GPU-second, the throughput choice %.0f",
			res.Choice.Estimate.TokensPerSPerGPU, fast.Choice.Estimate.TokensPerSPerGPU)
	}
	if !strings.Contains(res.RunnersUp[0].Reason, "cost") {
		t.Errorf("cost runner-up reason %q does not speak of cost", res.RunnersUp[0].Reason)
	}
}

func TestSearchFrameworkChoices(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		framework string
		allowed   func(layout.Layout) bool
	}{
		"fsdp2 always shards":       {estimate.FrameworkFSDP2, func(l layout.Layout) bool { return l.FSDP && !l.SequenceParallel }},
		"eager never shards":        {estimate.FrameworkEager, func(l layout.Layout) bool { return !l.FSDP && l.ZeRO == 0 }},
		"megatron shards up to one": {estimate.FrameworkMegatron, func(l layout.Layout) bool { return !l.FSDP && l.ZeRO <= 1 }},
		"gpuflow replicates or shards fully, no cp": {estimate.FrameworkGpuflow, func(l layout.Layout) bool {
			return l.ZeRO == 0 && l.CP == 1 && l.SequenceParallel == (l.TP > 1)
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := Request{Model: preset(t, "llama3-8b"), Hardware: builtin(t, "nebius-h100-8", 0), GlobalBatch: 64, Framework: tc.framework}
			res, err := Search(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range append([]Candidate{res.Choice}, res.RunnersUp...) {
				if !tc.allowed(c.Layout) {
					t.Errorf("%s cannot run %+v", tc.framework, c.Layout)
				}
			}
		})
	}
}

func TestSearchFailures(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		edit func(*Request)
		want string
	}{
		"nothing fits":      {func(r *Request) { r.Model = preset(t, "llama3-405b"); r.Hardware = builtin(t, "h100-x1", 0) }, "no layout fits"},
		"no global batch":   {func(r *Request) { r.GlobalBatch = 0 }, "global batch"},
		"unknown objective": {func(r *Request) { r.Objective = "speed" }, "unknown objective"},
		"too many GPUs":     {func(r *Request) { r.GPUs = 16 }, "asks for 16 GPUs"},
		"no hardware":       {func(r *Request) { r.Hardware = nil }, "no hardware"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := sevenB(t)
			tc.edit(&r)
			_, err := Search(r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	r := sevenB(t)
	r.Model, r.Hardware = preset(t, "llama3-405b"), builtin(t, "h100-x1", 0)
	if _, err := Search(r); !errors.Is(err, ErrNoLayout) {
		t.Errorf("error %v is not ErrNoLayout", err)
	}
}

// BenchmarkSearch70BOn1024 is the search's speed target: the full search for a
// 70B model on 1,024 GPUs under one second on 2 cores.
func BenchmarkSearch70BOn1024(b *testing.B) {
	// megatron has the widest space (CP, ZeRO 0/1, sequence parallelism);
	// gpuflow, the default, the trainer's (replication or FSDP, no CP).
	for _, fw := range []string{"megatron", "gpuflow"} {
		b.Run(fw, func(b *testing.B) {
			r := Request{Model: preset(b, "llama3-70b"), Hardware: builtin(b, "nebius-h100-8", 128), GlobalBatch: 1024, Framework: fw}
			var res *Result
			for b.Loop() {
				var err error
				if res, err = Search(r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Considered), "layouts")
		})
	}
}

func TestBalancedEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		layers, pp, first, last int
		ok                      bool
	}{
		{126, 16, 7, 7, true}, // Llama 3 405B's published split
		{70, 12, 5, 5, true},
		{30, 4, 7, 7, true},
		{9, 4, 2, 1, true},
		{33, 2, 17, 16, true},
		{8, 0, 0, 0, false},
		{5, 4, 0, 0, false}, // the stages between take 4, leaving one
	}
	for _, tt := range tests {
		first, last, ok := balancedEnds(tt.layers, tt.pp)
		if first != tt.first || last != tt.last || ok != tt.ok {
			t.Errorf("balancedEnds(%d, %d) = %d, %d, %v; want %d, %d, %v", tt.layers, tt.pp, first, last, ok, tt.first, tt.last, tt.ok)
		}
		if ok {
			if _, valid := layout.StageLayers(layout.Layout{PP: tt.pp, FirstStageLayers: first, LastStageLayers: last}, tt.layers); !valid {
				t.Errorf("balancedEnds(%d, %d) = %d, %d, which the layout rules refuse", tt.layers, tt.pp, first, last)
			}
		}
	}
}

// TestSearchUnevenPipelines: a model whose layers pp does not divide is
// still searched on that pp, its ends balanced, and the candidates pass
// the layout rules.
func TestSearchUnevenPipelines(t *testing.T) {
	t.Parallel()
	r := sevenB(t)
	r.Model.Layers = 30 // 4 stages: 7, 8, 8, 7
	s, err := newSearch(r)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range s.layouts(8) {
		if l.PP == 4 {
			found = true
			if l.FirstStageLayers != 7 || l.LastStageLayers != 7 || l.VP != 1 {
				t.Errorf("pp 4 candidate %+v; want first and last stage layers 7, vp 1", l)
			}
		}
	}
	if !found {
		t.Error("no pp = 4 candidate for 30 layers")
	}
	res, err := Search(r)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, r, res)
}

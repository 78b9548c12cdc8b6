package autolayout

import (
	"fmt"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
)

// score is what the objective maximises.
func (s *search) score(c Candidate) float64 {
	if s.objective == ObjectiveCost {
		return c.Estimate.TokensPerSPerGPU // tokens per GPU-second: cost per token inverted
	}
	return c.Estimate.TokensPerS
}

// better orders candidates: by the objective, then by fewer warnings,
// the simpler layout, less memory and a larger micro-batch, so the order
// is total and the search deterministic.
func (s *search) better(a, b Candidate) bool {
	if sa, sb := s.score(a), s.score(b); sa != sb {
		return sa > sb
	}
	if wa, wb := len(a.Estimate.Findings), len(b.Estimate.Findings); wa != wb {
		return wa < wb
	}
	if c := simplicity(a.Layout, b.Layout); c != 0 {
		return c < 0
	}
	if ma, mb := a.Estimate.Memory.Total, b.Estimate.Memory.Total; ma != mb {
		return ma < mb
	}
	return a.Layout.MicroBatch > b.Layout.MicroBatch
}

// simplicity compares layouts: negative when a is simpler (fewer GPUs,
// smaller model-parallel degrees, less sharding and recomputation), zero
// when they are alike.
func simplicity(a, b layout.Layout) int {
	ka := []int{a.WorldSize(), a.PP, a.VP, a.CP, a.TP, a.ShardingStage(), recomputeRank(a.Recompute)}
	kb := []int{b.WorldSize(), b.PP, b.VP, b.CP, b.TP, b.ShardingStage(), recomputeRank(b.Recompute)}
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] - kb[i]
		}
	}
	return 0
}

func recomputeRank(r string) int {
	return map[string]int{layout.RecomputeSelective: 1, layout.RecomputeFull: 2}[r]
}

// whyLost explains in one line how a runner-up falls short of the choice:
// by how much, and the step-time part that grew most.
func (s *search) whyLost(c, choice Candidate) string {
	gap := 1 - s.score(c)/s.score(choice)
	what := "throughput"
	if s.objective == ObjectiveCost {
		what = "tokens per GPU-hour (higher cost per token)"
	}
	if gap <= 0 {
		return fmt.Sprintf("ties on %s; the choice has fewer warnings, is simpler or uses less memory", what)
	}
	name, delta := largestGrowth(parts(c.Estimate), parts(choice.Estimate))
	if delta <= 0 {
		return fmt.Sprintf("%.1f%% lower %s", 100*gap, what)
	}
	return fmt.Sprintf("%.1f%% lower %s, mostly %s (+%.3g s per step)", 100*gap, what, name, delta)
}

type part struct {
	name string
	s    float64
}

// parts splits a step into what the runner-up can lose time on.
func parts(e *estimate.Estimate) []part {
	x := e.ExposedCommS
	bubble := e.ComputeS * e.BubbleFraction
	return []part{
		{"compute (recomputation or smaller matrix products)", e.ComputeS},
		{"pipeline bubble", bubble},
		{"tensor-parallel communication", x.TP},
		{"context-parallel communication", x.CP},
		{"pipeline sends", x.PP},
		{"data-parallel communication", x.DP},
		{"optimizer step", e.OptimizerS},
	}
}

func largestGrowth(loser, winner []part) (string, float64) {
	best, name := 0.0, ""
	for i := range loser {
		if d := loser[i].s - winner[i].s; d > best {
			best, name = d, loser[i].name
		}
	}
	return name, best
}

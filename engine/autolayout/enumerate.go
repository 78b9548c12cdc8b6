package autolayout

import "github.com/gpuflow/gpuflow/engine/layout"

var recomputes = []string{layout.RecomputeNone, layout.RecomputeSelective, layout.RecomputeFull}

// layouts lists every layout on world GPUs whose degrees divide what
// they must (heads and kv heads by tp, sequence by cp, layers by pp*vp,
// global batch by dp*micro_batch). Validate still checks each one; this
// only keeps hopeless combinations out of the count.
func (s *search) layouts(world int) []layout.Layout {
	var out []layout.Layout
	m := s.r.Model
	for _, tp := range s.upTo(divisors(world), s.r.Limits.MaxTP) {
		if m.Heads%tp != 0 || m.KVHeads%tp != 0 {
			continue
		}
		for _, cp := range s.upTo(divisors(world/tp), s.r.Limits.MaxCP) {
			if m.SeqLen%(cp*tp) != 0 || (cp > 1 && m.SeqLen/cp < s.minCPChunk()) {
				continue
			}
			for _, pp := range s.upTo(divisors(world/(tp*cp)), s.r.Limits.MaxPP) {
				dp := world / (tp * cp * pp)
				if s.r.GlobalBatch%dp != 0 {
					continue
				}
				base := layout.Layout{TP: tp, CP: cp, PP: pp, DP: dp, GlobalBatch: s.r.GlobalBatch,
					Precision: s.r.Precision, SequenceParallel: s.seqPar && tp > 1}
				if m.Layers%pp != 0 {
					var ok bool
					if base.FirstStageLayers, base.LastStageLayers, ok = balancedEnds(m.Layers, pp); !ok {
						continue
					}
				}
				out = s.appendVariants(out, base)
			}
		}
	}
	return out
}

// balancedEnds splits layers that pp does not divide as Llama 3 405B's
// 126 on 16 stages are: the stages between hold ceil(layers/pp) each and
// the first and last share what is left (7, 8 x 14, 7; an odd layer on the
// first), so the pipeline's
// pace is the even split's rounded up and the ends have room for the
// embedding and the output layer. ok is false when too few layers are
// left for both ends to hold one.
func balancedEnds(layers, pp int) (first, last int, ok bool) {
	if pp < 2 {
		return 0, 0, false
	}
	mid := (layers + pp - 1) / pp
	rest := layers - (pp-2)*mid
	if rest < 2 {
		return 0, 0, false
	}
	// An odd layer goes to the first stage: the last runs the output layer.
	last = rest / 2
	return rest - last, last, true
}

func gcd(vals ...int) int {
	g := 0
	for _, v := range vals {
		for v != 0 {
			g, v = v, g%v
		}
	}
	return g
}

// appendVariants adds every vp, micro-batch, sharding and recompute
// choice of one set of degrees.
func (s *search) appendVariants(out []layout.Layout, base layout.Layout) []layout.Layout {
	vps := []int{1}
	if base.PP > 1 {
		counts, _ := layout.StageLayers(base, s.r.Model.Layers)
		vps = s.upTo(divisors(gcd(counts...)), s.r.Limits.MaxVP)
	}
	maxMicro := s.r.Limits.MaxMicroBatch
	if maxMicro <= 0 {
		maxMicro = DefaultMaxMicroBatch
	}
	micros := s.upTo(divisors(s.r.GlobalBatch/base.DP), maxMicro)
	for _, vp := range vps {
		for _, mb := range micros {
			for _, sh := range s.shardings {
				if (sh.zero > 0 || sh.fsdp) && base.DP*base.CP == 1 {
					continue // nothing to shard over
				}
				for _, rc := range recomputes {
					l := base
					l.VP, l.MicroBatch, l.ZeRO, l.FSDP, l.Recompute = vp, mb, sh.zero, sh.fsdp, rc
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// upTo keeps the values not above limit (0: no limit).
func (s *search) upTo(vals []int, limit int) []int {
	if limit <= 0 {
		return vals
	}
	out := vals[:0:0]
	for _, v := range vals {
		if v <= limit {
			out = append(out, v)
		}
	}
	return out
}

func (s *search) minCPChunk() int {
	if s.r.Limits.MinCPChunk > 0 {
		return s.r.Limits.MinCPChunk
	}
	return DefaultMinCPChunk
}

package estimate

import (
	"fmt"
	"math"

	"github.com/gpuflow/gpuflow/engine/layout"
)

// Thresholds for findings.
const (
	memoryWarnFraction  = 0.9
	bubbleWarnFraction  = 0.2
	exposedDPWarnOfStep = 0.1
	tpCommWarnOfCompute = 0.5
	// hostBoundWarnOfStep: past this share of the step spent waiting for
	// the host, the step follows the CPU's speed, which on shared
	// machines moved by a quarter between runs (docs/estimator.md).
	hostBoundWarnOfStep = 0.25
	gib                 = 1 << 30
	// checkpointOffOptimum: a checkpoint interval more than this factor
	// above or below Young-Daly's optimum is flagged.
	checkpointOffOptimum = 2.0
)

func (j *job) findings(e *Estimate) []layout.Finding {
	var fs []layout.Finding
	fs = append(fs, memoryFindings(e)...)
	if f := j.shardingIgnored(); f != "" {
		fs = append(fs, warn("sharding-on-one-gpu", f,
			"%s asks to shard over a data-parallel group of one GPU: there is nothing to shard over, so gpuflow's trainer runs a bf16 copy of the model beside its fp32 weights instead (planned here) and %s changes nothing; remove it, or raise dp to shard over several GPUs.",
			f, f))
	}
	if tp := j.group(layout.KindTP); tp.NodesSpanned > 1 {
		fs = append(fs, warn("tp-across-nodes", "tp",
			"tp = %d spans %d nodes over %s; tensor parallelism communicates every layer, so keep it inside one node unless the NVLink domain spans nodes.",
			tp.Size, tp.NodesSpanned, tp.Link))
	}
	if dp, _ := j.dataLink(); j.dataShards() > 1 && j.dataOnNetwork() && e.ExposedCommS.DP > exposedDPWarnOfStep*e.StepTimeS {
		fs = append(fs, warn("dp-on-network-no-overlap", "dp",
			"data-parallel communication crosses the network at %.0f GB/s and %.2f s of it per step (%.0f%%) is not hidden behind the backward pass; raise micro_batch or global_batch to give it more compute to overlap, or shard less (a lower zero stage).",
			dp.busBW/1e9, e.ExposedCommS.DP, 100*e.ExposedCommS.DP/e.StepTimeS))
	}
	if e.BubbleFraction > bubbleWarnFraction {
		fs = append(fs, warn("bubble-over-20", "global_batch",
			"the pipeline bubble is %.0f%% of compute ((pp-1)/(vp*m) with %d micro-batches); raise global_batch, lower micro_batch or pp, or interleave with vp.",
			100*e.BubbleFraction, j.micro))
	}
	if e.HostWaitS > hostBoundWarnOfStep*e.StepTimeS {
		fs = append(fs, warn("host-bound", "micro_batch",
			"the GPUs wait for the host %.0f%% of the step (%.1f ms of host time per layer and micro-batch%s); throughput then follows the CPU, whose speed moved by a quarter between runs on shared machines; raise micro_batch%s to give each launch more work.",
			100*e.HostWaitS/e.StepTimeS, 1e3*j.hostTime()/j.layers, j.tpHostNote(), j.tpHostAdvice()))
	}
	if tp := e.ExposedCommS.TP; tp > tpCommWarnOfCompute*e.ComputeS {
		fs = append(fs, warn("tp-comm-heavy", "tp",
			"tensor-parallel communication takes %.0f%% as long as the compute it splits; a lower tp would waste less time.",
			100*tp/e.ComputeS))
	}
	return append(fs, goodputFindings(e, j.in.CheckpointEvery)...)
}

// goodputFindings flags a checkpoint interval far from the optimum and a
// run that interruptions would never let finish.
func goodputFindings(e *Estimate, every int64) []layout.Finding {
	g := e.Goodput
	if g == nil {
		return nil
	}
	var fs []layout.Finding
	if g.Goodput == 0 {
		fs = append(fs, warn("goodput-none", "checkpoint_every",
			"interruptions every %.1f h on average would undo the work between checkpoints faster than it is done (restart %.0f s, checkpoint every %.0f s); checkpoint more often or use fewer GPUs.",
			g.MeanTimeBetweenInterruptionsS/3600, g.RestartS, g.IntervalS))
	}
	ratio := g.IntervalS / g.OptimalIntervalS
	if every == 0 || (ratio > 1/checkpointOffOptimum && ratio < checkpointOffOptimum) {
		return fs
	}
	best := max(1, int64(math.Round(g.OptimalIntervalS/e.StepTimeS)))
	return append(fs, warn("checkpoint-interval", "checkpoint_every",
		"checkpoint_every = %d steps is %.0f s, %.1fx the Young-Daly optimum of %.0f s (sqrt(2 x %.0f s write x %.1f h between interruptions)); checkpoint_every = %d would leave a goodput of %.1f%% instead of %.1f%%.",
		every, g.IntervalS, ratio, g.OptimalIntervalS, g.CheckpointWriteS, g.MeanTimeBetweenInterruptionsS/3600, best,
		100*goodputAt(g, e.DurationS, float64(best)*e.StepTimeS), 100*g.Goodput))
}

// goodputAt is the goodput the same run would have at another interval.
func goodputAt(g *Goodput, duration, interval float64) float64 {
	lost := (g.RestartS + (interval+g.CheckpointWriteS)/2) / g.MeanTimeBetweenInterruptionsS
	if lost >= 1 || duration <= 0 {
		return 0
	}
	return (1 - lost) / (1 + g.CheckpointWriteS/interval)
}

// tpHostNote says how much of a layer's host time is tensor
// parallelism's wait for the slowest rank.
func (j *job) tpHostNote() string {
	if j.l.TP == 1 || j.fw.HostSPerTPCollectiveSpread == 0 {
		return ""
	}
	return fmt.Sprintf(", %.1f ms of it waiting at tp's collectives for the slowest of %d ranks", 1e3*(j.hostTime()/j.layers-j.fw.HostSPerLayer), j.l.TP)
}

func (j *job) tpHostAdvice() string {
	if j.l.TP == 1 {
		return ""
	}
	return " or lower tp"
}

func (j *job) dataOnNetwork() bool {
	return j.group(layout.KindDP).Link == layout.LinkNetwork || j.group(layout.KindCP).Link == layout.LinkNetwork
}

func memoryFindings(e *Estimate) []layout.Finding {
	return capacityFindings(e, "lower micro_batch, recompute more, raise the zero stage, or add tp or pp")
}

// forwardFindings: forward-only work has no recomputation, tensor or
// pipeline parallelism to turn to, only its batch and the weights' sharding.
func forwardFindings(e *Estimate) []layout.Finding {
	return capacityFindings(e, "lower micro_batch, or shard the weights over the ranks with fsdp = true")
}

// capacityFindings: an error where the peak exceeds the GPU's memory,
// naming what to change, a warning near it.
func capacityFindings(e *Estimate, remedy string) []layout.Finding {
	total, capacity := float64(e.Memory.Total), float64(e.MemoryCapacityBytes)
	if capacity <= 0 {
		return nil
	}
	switch {
	case total > capacity:
		return []layout.Finding{{Rule: "memory-over-100", Severity: layout.SeverityError, Field: "micro_batch",
			Message: fmt.Sprintf("the most loaded GPU needs %.1f GiB but has %.1f GiB; %s.", total/gib, capacity/gib, remedy)}}
	case total > memoryWarnFraction*capacity:
		return []layout.Finding{warn("memory-over-90", "micro_batch",
			"the most loaded GPU needs %.1f GiB of %.1f GiB (%.0f%%), leaving little room for fragmentation; lower micro_batch or recompute more.",
			total/gib, capacity/gib, 100*total/capacity)}
	}
	return nil
}

// shardingIgnored names the layout attribute asking for sharding that
// the framework does not apply on one GPU alone (Framework.AloneWithoutFSDP2),
// or "".
func (j *job) shardingIgnored() string {
	switch {
	case !j.alone():
		return ""
	case j.l.FSDP:
		return "fsdp"
	case j.l.ZeRO > 0:
		return "zero"
	}
	return ""
}

func warn(rule, field, format string, args ...any) layout.Finding {
	return layout.Finding{Rule: rule, Severity: layout.SeverityWarning, Field: field, Message: fmt.Sprintf(format, args...)}
}

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpuflow/gpuflow/engine/estimate"
)

// barWidth is the memory bar's length in characters.
const barWidth = 30

// writeEstimateHuman prints the memory breakdown as a bar against capacity
// and the time, throughput and cost lines. Memory is shown in GiB.
func writeEstimateHuman(w io.Writer, e *estimate.Estimate, pal *palette) {
	m := e.Memory
	capacity := float64(e.MemoryCapacityBytes)
	used := float64(m.Total) / capacity
	fill := min(int(used*barWidth+0.5), barWidth)
	bar := strings.Repeat("#", fill) + strings.Repeat(".", barWidth-fill)
	c := pal.green
	switch {
	case used > 1:
		c = pal.red
	case used > 0.9:
		c = pal.yellow
	}
	row := func(key, format string, a ...any) { fmt.Fprintf(w, "      %-12s %s\n", key, fmt.Sprintf(format, a...)) }
	row("memory/GPU", "[%s] %s of %.1f GiB", c.Sprint(bar), c.Sprintf("%.1f GiB (%.0f%%)", gib(m.Total), used*100), capacity/(1<<30))
	row("", "weights %.1f, grads %.1f, optimizer %.1f, activations %.1f, other %.1f GiB",
		gib(m.Weights), gib(m.Gradients), gib(m.Optimizer), gib(m.Activations), gib(m.Other))
	row("step", "%.3f s: compute %.3f s, optimizer %.3f s, bubble %.1f%%, exposed comm tp %.3f pp %.3f dp %.3f cp %.3f s",
		e.StepTimeS, e.ComputeS, e.OptimizerS, e.BubbleFraction*100,
		e.ExposedCommS.TP, e.ExposedCommS.PP, e.ExposedCommS.DP, e.ExposedCommS.CP)
	if e.HostWaitS > 0 {
		row("", "waiting %.3f s of it on the host to launch the work", e.HostWaitS)
	}
	row("throughput", "%.0f tokens/s (%.0f per GPU), MFU %.1f%%, %.3g params, %s", e.TokensPerS, e.TokensPerSPerGPU,
		e.MFU*100, float64(e.Params), e.Framework)
	row("", "%.0f TFLOP/s per GPU of model FLOPs, %.0f of hardware FLOPs (the work executed, recomputation included)",
		e.ModelTFLOPSPerGPU, e.HardwareTFLOPSPerGPU)
	if e.Steps > 0 {
		row("run", "%d steps in %s, $%s, %s kWh", e.Steps, formatDuration(e.DurationS), formatAmount(e.CostUSD), formatAmount(e.EnergyKWh))
	}
	if v := e.Validation; v != nil {
		writeValidationHuman(row, v, e.DurationS)
	}
	if g := e.Goodput; g != nil {
		row("goodput", "%.1f%%: %.2f interruptions expected (one per %s), wall time %s",
			g.Goodput*100, g.ExpectedInterruptions, formatDuration(g.MeanTimeBetweenInterruptionsS), formatDuration(g.WallTimeS))
		row("", "checkpoint %.0f GB: write %s, restart %s, every %s (Young-Daly %s)",
			float64(g.CheckpointBytes)/1e9, formatDuration(g.CheckpointWriteS), formatDuration(g.RestartS),
			formatDuration(g.IntervalS), formatDuration(g.OptimalIntervalS))
	}
	source := "datasheet figures"
	if len(e.Calibrated) > 0 {
		source = "calibrated: " + strings.Join(e.Calibrated, ", ")
	}
	row("from", "%s", source)
}

// writeValidationHuman prints the validations' share of the run and what
// they add to the peak.
func writeValidationHuman(row func(key, format string, a ...any), v *estimate.ValidationEstimate, runS float64) {
	share := 0.0
	if runS > 0 {
		share = v.DurationS / runS * 100
	}
	row("validation", "%d in the run, %.2f s each, %s in all (%.1f%% of the run)", v.Count, v.EachS,
		formatDuration(v.DurationS), share)
	if v.AddedBytes > 0 {
		row("", "holds %.1f GiB at a time, %.1f GiB above the training peak's activations", gib(v.PeakBytes), gib(v.AddedBytes))
		return
	}
	row("", "holds %.1f GiB at a time, within the training peak", gib(v.PeakBytes))
}

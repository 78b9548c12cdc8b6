package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/layout"
)

// writePlanHuman renders a plan for people: one block per stage with its
// action, then the summary line.
func writePlanHuman(w io.Writer, plan *engine.Plan, pal *palette) {
	if len(plan.Stages) == 0 {
		fmt.Fprintln(w, "The workload has no stages to plan.")
		return
	}
	fmt.Fprintf(w, "gpuflow plan for %s\n\n", plan.Workload)
	for _, sp := range plan.Stages {
		writeStageHuman(w, sp, pal)
		fmt.Fprintln(w)
	}
	writeOutputsHuman(w, plan)
	fmt.Fprintf(w, "%s %d to create, %d to replace, %d unchanged.\n", pal.bold.Sprint("Plan:"),
		plan.Summary.Create, plan.Summary.Replace, plan.Summary.NoOp)
}

func actionMark(action string, pal *palette) string {
	switch action {
	case engine.ActionCreate:
		return pal.green.Sprint("+")
	case engine.ActionReplace:
		return pal.yellow.Sprint("~")
	}
	return pal.dim.Sprint("=")
}

func writeStageHuman(w io.Writer, sp *engine.StagePlan, pal *palette) {
	fmt.Fprintf(w, "  %s %s  %s\n", actionMark(sp.Action, pal), pal.bold.Sprint("stage."+sp.Address),
		pal.dim.Sprintf("(%s, plugin %s %s)", sp.Action, sp.Plugin.Name, sp.Plugin.Version))
	row := func(key, format string, a ...any) {
		fmt.Fprintf(w, "      %-12s %s\n", key, fmt.Sprintf(format, a...))
	}
	for _, r := range sp.Reasons {
		row("because", "%s", r)
	}
	if len(sp.DependsOn) > 0 {
		row("after", "%s", strings.Join(sp.DependsOn, ", "))
	}
	if hw := sp.Hardware; hw != nil {
		row("hardware", "%s: %d node(s) x %d %s (%.0f GiB), %s, network %s", hw.Name, hw.Nodes, hw.GPUsPerNode,
			hw.GPUModel, gib(hw.GPUMemoryBytes), hw.Interconnect, hw.Network)
	}
	if m := sp.Model; m != nil {
		row("model", "%s: %d layers, hidden %d, ffn %d, %d/%d heads, vocab %d, seq %d", m.Name, m.Layers, m.Hidden,
			m.FFNHidden, m.Heads, m.KVHeads, m.Vocab, m.SeqLen)
		if m.From != "" {
			row("", "%s from %s", m.Architecture, m.From)
		}
	}
	if l := sp.Layout; l != nil {
		row("layout", "%s: tp %d x pp %d x dp %d x cp %d = %d GPUs, vp %d, zero %d, fsdp %v", l.Name, l.TP, l.PP, l.DP, l.CP,
			l.WorldSize(), l.VP, l.ZeRO, l.FSDP)
		row("", "micro %d, global %d (accumulate %d), recompute %s, sp %v, %s", l.MicroBatch, l.GlobalBatch,
			l.GradAccumulation(), l.Recompute, l.SequenceParallel, l.Precision)
		if m := sp.Model; m != nil && layout.Uneven(l.Layout) {
			row("", "layers per pipeline stage: %s", layout.StageLayersText(l.Layout, m.Layers))
		}
	}
	if a := sp.AutoLayout; a != nil {
		writeAutoLayoutHuman(w, a)
	}
	if p := sp.Placement; p != nil {
		row("placement", "%s", p.Summary)
	}
	if sp.Estimate != nil {
		writeEstimateHuman(w, sp.Estimate, pal)
	}
	if sp.Claims.GPUsPerNode > 0 {
		row("claims", "%d node(s) x %d GPUs", sp.Claims.Nodes, sp.Claims.GPUsPerNode)
	}
	for _, d := range sp.Details {
		row(d.Key, "%s", d.Value)
	}
	if sp.ExpectedDurationS > 0 {
		row("expected", "%s", formatDuration(sp.ExpectedDurationS))
	}
	for i, e := range sp.NCCLEnv {
		key := ""
		if i == 0 {
			key = "nccl env"
		}
		row(key, "%s=%s  %s", e.Name, e.Value, pal.dim.Sprintf("(%s: %s)", e.Source, e.Reason))
	}
	if sp.Executor != nil {
		writeExecutorHuman(w, sp.Executor, pal)
	}
	for _, u := range sp.ConfigUnknown {
		row("after apply", "%s is known only after upstream stages run", u)
	}
}

func writeOutputsHuman(w io.Writer, plan *engine.Plan) {
	if len(plan.Outputs) == 0 {
		return
	}
	fmt.Fprintln(w, "  Outputs:")
	for _, o := range plan.Outputs {
		val := "(known after apply)"
		switch {
		case o.Sensitive:
			val = "(sensitive)"
		case o.Known:
			val = string(o.Value)
		}
		fmt.Fprintf(w, "      %-12s %s\n", o.Name, val)
	}
	fmt.Fprintln(w)
}

// formatDuration prints seconds as a short human duration.
func formatDuration(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.0f s", s)
	case s < 3600:
		return fmt.Sprintf("%.1f min", s/60)
	case s < 48*3600:
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.1f days", s/86400)
}

// formatAmount prints a cost or an energy with two significant digits
// below 10, so that a short run's 0.4 kWh or $2.40 does not read as 0 or
// $2, and as a whole number from 10 up.
func formatAmount(v float64) string {
	if v == 0 {
		return "0"
	}
	decimals := max(0, 1-int(math.Floor(math.Log10(math.Abs(v)))))
	if scale := math.Pow(10, float64(decimals)); math.Abs(math.Round(v*scale)/scale) < 10 {
		return strconv.FormatFloat(v, 'f', decimals, 64)
	}
	return fmt.Sprintf("%.0f", v)
}

// writeAutoLayoutHuman says how the search went and why each runner-up lost.
func writeAutoLayoutHuman(w io.Writer, a *engine.AutoLayoutPlan) {
	fmt.Fprintf(w, "      %-12s searched %d layouts for %s, %d fit; runners-up:\n", "auto", a.Considered, a.Objective, a.Fitting)
	for _, c := range a.RunnersUp {
		l := c.Layout
		fmt.Fprintf(w, "      %-12s tp %d pp %d dp %d cp %d vp %d micro %d zero %d recompute %s: %.0f tokens/s, %.1f GiB, $%s; %s\n", "",
			l.TP, l.PP, l.DP, l.CP, l.VP, l.MicroBatch, l.ShardingStage(), l.Recompute,
			c.Estimate.TokensPerS, gib(c.Estimate.Memory.Total), formatAmount(c.Estimate.CostUSD), c.Reason)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gpuflow/gpuflow/engine/plandiff"
)

// maxValueWidth bounds a value printed in a change; longer ones are cut.
const maxValueWidth = 60

// writeDiffHuman renders a diff for people: the two sources, changed
// variables, one block per stage that differs, then the counts.
func writeDiffHuman(w io.Writer, d *plandiff.Diff, pal *palette) {
	fmt.Fprintf(w, "gpuflow diff\n  old  %s%s\n  new  %s%s\n\n", d.Old.Source, versionNote(d, d.Old),
		d.New.Source, versionNote(d, d.New))
	if !d.HasChanges() {
		fmt.Fprintln(w, "No changes: both plans run the same stages with the same inputs and estimates.")
		return
	}
	for i, c := range d.Variables {
		fmt.Fprintf(w, "  %-14s %s\n", keyOnce(i, "variables"), changeText(c))
	}
	if len(d.Variables) > 0 {
		fmt.Fprintln(w)
	}
	for _, st := range d.Stages {
		if st.Status != plandiff.StatusUnchanged {
			writeStageDiffHuman(w, st, pal)
			fmt.Fprintln(w)
		}
	}
	s := d.Summary
	fmt.Fprintf(w, "%s %d added, %d removed, %d replaced, %d changed, %d unchanged.\n", pal.bold.Sprint("Diff:"),
		s.Added, s.Removed, s.Replaced, s.Changed, s.Unchanged)
}

// versionNote names the gpuflow that made a side's plan when the two differ.
func versionNote(d *plandiff.Diff, s plandiff.Side) string {
	if d.Old.GpuflowVersion == d.New.GpuflowVersion {
		return ""
	}
	return fmt.Sprintf("  (gpuflow %s)", s.GpuflowVersion)
}

// statusMark follows plan's marks: + added, - removed, -/+ replaced, ~ changed.
func statusMark(status string, pal *palette) string {
	switch status {
	case plandiff.StatusAdded:
		return pal.green.Sprint("+")
	case plandiff.StatusRemoved:
		return pal.red.Sprint("-")
	case plandiff.StatusReplaced:
		return pal.yellow.Sprint("-/+")
	case plandiff.StatusChanged:
		return pal.cyan.Sprint("~")
	}
	return pal.dim.Sprint("=")
}

// diffRows prints "key  text" rows under a stage; an empty key continues
// the row above.
type diffRows struct{ w io.Writer }

func (r diffRows) row(key, format string, a ...any) {
	fmt.Fprintf(r.w, "      %-12s %s\n", key, fmt.Sprintf(format, a...))
}

func writeStageDiffHuman(w io.Writer, st *plandiff.Stage, pal *palette) {
	fmt.Fprintf(w, "  %s %s  %s\n", statusMark(st.Status, pal), pal.bold.Sprint("stage."+st.Address), pal.dim.Sprintf("(%s)", st.Status))
	r := diffRows{w}
	if c := st.Plugin; c != nil && c.Old == nil {
		r.row("plugin", "%s", valueText(c.New))
	} else if c != nil && c.New == nil {
		r.row("plugin", "%s", valueText(c.Old))
	}
	for _, reason := range st.Reasons {
		r.row("because", "%s", reason)
	}
	if c := st.DependsOn; c != nil {
		r.row("after", "%s -> %s", listText(c.Old), listText(c.New))
	}
	for i, c := range st.Arguments {
		r.row(keyOnce(i, "arguments"), "%s", changeText(c))
	}
	for i, c := range st.Hardware {
		r.row(keyOnce(i, "hardware"), "%s", changeText(c))
	}
	for i, c := range st.Model {
		r.row(keyOnce(i, "model"), "%s", changeText(c))
	}
	writeLayoutDiff(r, st.Layout)
	writeEstimateDiff(r, st.Estimate, pal)
	writeNCCLDiff(r, st.NCCLEnv, pal)
	writeExecutorDiff(r, st.Executor)
	writeNumerics(r, st.Numerics, pal)
	writeCheckpoint(r, st.Checkpoint, pal)
}

func writeLayoutDiff(r diffRows, l *plandiff.Layout) {
	if l == nil {
		return
	}
	if len(l.Changes) > 0 {
		parts := make([]string, len(l.Changes))
		for i, c := range l.Changes {
			parts[i] = fmt.Sprintf("%s %s -> %s", c.Path, valueText(c.Old), valueText(c.New))
		}
		r.row("layout", "%s", strings.Join(parts, ", "))
	}
	for i, g := range l.Groups {
		text := fmt.Sprintf("%s %s -> %s", g.Kind, groupSide(g.OldSize, g.OldLink, g.OldNodesSpanned), groupSide(g.NewSize, g.NewLink, g.NewNodesSpanned))
		if g.OldCommS != nil && g.NewCommS != nil {
			text += fmt.Sprintf(", comm %.3f -> %.3f s/step", *g.OldCommS, *g.NewCommS)
		}
		r.row(keyOnce(i, "placement"), "%s", text)
	}
	for i, n := range l.Notes {
		r.row(keyOnce(i, "effect"), "%s", n)
	}
}

func groupSide(size int, link string, nodes int) string {
	s := fmt.Sprintf("%d %s", size, link)
	if nodes > 1 {
		s += fmt.Sprintf(" (%d nodes)", nodes)
	}
	return s
}

// alwaysShown are the metrics printed even when equal; the others only
// when they change.
var alwaysShown = map[string]bool{
	plandiff.MetricMemoryPerGPU: true, plandiff.MetricStepTime: true, plandiff.MetricTokensPerS: true, plandiff.MetricMFU: true,
	plandiff.MetricDuration: true, plandiff.MetricCost: true, plandiff.MetricEnergy: true,
}

var metricLabels = map[string]string{
	plandiff.MetricMemoryPerGPU: "memory/GPU", plandiff.MetricMemoryCapacity: "GPU memory", plandiff.MetricStepTime: "step time",
	plandiff.MetricTokensPerS: "tokens/s", plandiff.MetricMFU: "MFU", plandiff.MetricDuration: "duration",
	plandiff.MetricCost: "cost", plandiff.MetricEnergy: "energy", plandiff.MetricBubble: "bubble",
}

func writeEstimateDiff(r diffRows, e *plandiff.Estimate, pal *palette) {
	if e == nil {
		return
	}
	for _, m := range e.Metrics {
		if alwaysShown[m.Name] || metricMoved(m) {
			r.row(metricLabels[m.Name], "%s", metricText(m))
		}
	}
	if ml := e.MemoryLimit; ml != nil {
		c := pal.green
		if ml.New != plandiff.MemoryFits {
			c = pal.red
		}
		r.row("memory limit", "%s", c.Sprint(ml.Message))
	}
}

func metricMoved(m plandiff.Metric) bool {
	return m.Old == nil || m.New == nil || *m.Old != *m.New
}

// metricText is "old -> new  (+x%)", or one value for a stage on one side.
func metricText(m plandiff.Metric) string {
	// Compare fills at least one side of every metric.
	if m.Old == nil {
		return formatMetric(m.Name, *m.New)
	}
	if m.New == nil {
		return "was " + formatMetric(m.Name, *m.Old)
	}
	s := formatMetric(m.Name, *m.Old) + " -> " + formatMetric(m.Name, *m.New)
	if m.ChangePct != nil {
		s += fmt.Sprintf("  (%s)", formatPct(*m.ChangePct))
	}
	return s
}

func formatPct(p float64) string {
	if fmt.Sprintf("%.1f", p) == "0.0" || fmt.Sprintf("%.1f", p) == "-0.0" {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// formatMetric prints a figure in the unit people read: GiB, seconds,
// percent, dollars.
func formatMetric(name string, v float64) string {
	switch name {
	case plandiff.MetricMemoryPerGPU, plandiff.MetricMemoryCapacity:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case plandiff.MetricStepTime:
		return fmt.Sprintf("%.3f s", v)
	case plandiff.MetricTokensPerS:
		return fmt.Sprintf("%.0f", v)
	case plandiff.MetricMFU, plandiff.MetricBubble:
		return fmt.Sprintf("%.1f%%", 100*v)
	case plandiff.MetricDuration:
		return formatDuration(v)
	case plandiff.MetricCost:
		return "$" + formatAmount(v)
	case plandiff.MetricEnergy:
		return formatAmount(v) + " kWh"
	}
	return fmt.Sprintf("%g", v)
}

func writeNCCLDiff(r diffRows, cs []plandiff.NCCLChange, pal *palette) {
	for i, c := range cs {
		var text string
		switch {
		case c.Old == nil:
			text = fmt.Sprintf("%s=%s (now set)", c.Name, *c.New)
		case c.New == nil:
			text = fmt.Sprintf("%s=%s (no longer set)", c.Name, *c.Old)
		default:
			text = fmt.Sprintf("%s=%s -> %s", c.Name, *c.Old, *c.New)
		}
		r.row(keyOnce(i, "nccl env"), "%s  %s", text, pal.dim.Sprintf("(%s: %s)", c.Source, c.Reason))
	}
}

// writeExecutorDiff lists executor changes; a job script, too long for a
// row, is summarised by the lines that differ.
func writeExecutorDiff(r diffRows, cs []plandiff.Change) {
	for i, c := range cs {
		text := changeText(c)
		switch {
		case c.Path == "script":
			text = "script: " + scriptChange(c)
		case c.Path == "manifest":
			writeManifestChange(r, keyOnce(i, "executor"), c)
			continue
		}
		r.row(keyOnce(i, "executor"), "%s", text)
	}
}

// writeManifestChange shows the lines of a Kubernetes manifest that only
// one side has, in the new manifest's order: what the change does to
// what apply submits.
func writeManifestChange(r diffRows, key string, c plandiff.Change) {
	var old, new string
	json.Unmarshal(c.Old, &old)
	json.Unmarshal(c.New, &new)
	r.row(key, "manifest:")
	removed, added := manifestLines(old, new)
	for _, l := range removed {
		r.row("", "  - %s", l)
	}
	for _, l := range added {
		r.row("", "  + %s", l)
	}
}

// manifestLines are the lines of old missing from new and the reverse,
// counted as multisets, each in its own side's order.
func manifestLines(old, new string) (removed, added []string) {
	oldLines, newLines := strings.Split(old, "\n"), strings.Split(new, "\n")
	only := func(a, b []string) []string {
		count := map[string]int{}
		for _, l := range b {
			count[l]++
		}
		var out []string
		for _, l := range a {
			if count[l] > 0 {
				count[l]--
				continue
			}
			out = append(out, l)
		}
		return out
	}
	return only(oldLines, newLines), only(newLines, oldLines)
}

// scriptChange counts the lines only one side of a job script has.
func scriptChange(c plandiff.Change) string {
	var old, new string
	json.Unmarshal(c.Old, &old)
	json.Unmarshal(c.New, &new)
	removed, added := lineChanges(old, new)
	return fmt.Sprintf("%d line(s) removed, %d added (diff -json has both scripts)", removed, added)
}

// lineChanges counts lines of old missing from new and the reverse, as
// multisets, so a moved line counts as neither.
func lineChanges(old, new string) (removed, added int) {
	count := map[string]int{}
	for _, l := range strings.Split(old, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(new, "\n") {
		count[l]--
	}
	for _, n := range count {
		if n > 0 {
			removed += n
		} else {
			added -= n
		}
	}
	return removed, added
}

func writeNumerics(r diffRows, n *plandiff.Numerics, pal *palette) {
	if n == nil {
		return
	}
	switch {
	case n.PerformanceOnly:
		r.row("numerics", "%s", pal.green.Sprint("performance-only change: the same global batch, tokens per step, learning-rate schedule and precision"))
		return
	case len(n.Changes) > 0:
		r.row("numerics", "%s", pal.yellow.Sprint("changes training numerics:"))
	default:
		r.row("numerics", "%s", pal.yellow.Sprint("may change training numerics:"))
	}
	for _, c := range n.Changes {
		r.row("", "%s", changeText(c))
	}
	if len(n.Upstream) > 0 {
		r.row("", "%s may differ: %s runs again", strings.Join(n.AfterApply, ", "), strings.Join(n.Upstream, ", "))
	}
}

func writeCheckpoint(r diffRows, c *plandiff.Checkpoint, pal *palette) {
	if c == nil {
		return
	}
	switch c.Verdict {
	case plandiff.CheckpointResume:
		r.row("checkpoints", "resume from the previous run's checkpoints as they are: %s", strings.Join(c.Reasons, "; "))
		return
	case plandiff.CheckpointReshard:
		r.row("checkpoints", "%s", pal.yellow.Sprint("resharding needed to resume from the previous run's checkpoints:"))
	default:
		r.row("checkpoints", "%s", pal.red.Sprint("the previous run's checkpoints do not fit this stage:"))
	}
	for _, reason := range c.Reasons {
		r.row("", "%s", reason)
	}
	if c.How != "" {
		r.row("", "%s", c.How)
	}
}

// changeText is "path: old -> new", with (unset) for a missing side.
func changeText(c plandiff.Change) string {
	if c.Sensitive {
		return c.Path + ": (sensitive value changed)"
	}
	return fmt.Sprintf("%s: %s -> %s", c.Path, pathValueText(c.Path, c.Old), pathValueText(c.Path, c.New))
}

// pathValueText shows a byte count (a path ending in _bytes) in GiB.
func pathValueText(path string, raw json.RawMessage) string {
	var n float64
	if strings.HasSuffix(path, "_bytes") && json.Unmarshal(raw, &n) == nil {
		return fmt.Sprintf("%.1f GiB", n/(1<<30))
	}
	return valueText(raw)
}

// valueText prints a JSON value plainly: strings without quotes, the rest
// as JSON, cut to maxValueWidth.
func valueText(raw json.RawMessage) string {
	if raw == nil {
		return "(unset)"
	}
	var s string
	text := string(raw)
	if json.Unmarshal(raw, &s) == nil {
		text = s
	}
	if r := []rune(text); len(r) > maxValueWidth {
		text = string(r[:maxValueWidth-3]) + "..."
	}
	return text
}

func listText(raw json.RawMessage) string {
	var list []string
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return "(none)"
	}
	return strings.Join(list, ", ")
}

// keyOnce labels the first of a run of rows.
func keyOnce(i int, key string) string {
	if i == 0 {
		return key
	}
	return ""
}

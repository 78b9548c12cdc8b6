package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/plandiff"
)

// tableMetrics are the estimate columns of the Markdown table.
var tableMetrics = []string{plandiff.MetricMemoryPerGPU, plandiff.MetricStepTime, plandiff.MetricTokensPerS,
	plandiff.MetricMFU, plandiff.MetricCost}

// writeDiffMarkdown renders a diff for a pull-request comment: a heading
// with the counts, warnings, one table row per stage that differs, and
// each stage's full text in a collapsed section.
func writeDiffMarkdown(w io.Writer, d *plandiff.Diff) {
	fmt.Fprintf(w, "### gpuflow diff\n\n`%s` → `%s`: %s\n\n", d.Old.Source, d.New.Source, summaryPhrase(d))
	if !d.HasChanges() {
		return
	}
	writeMarkdownWarnings(w, d)
	if len(d.Variables) > 0 {
		parts := make([]string, len(d.Variables))
		for i, c := range d.Variables {
			parts[i] = "`" + changeText(c) + "`"
		}
		fmt.Fprintf(w, "Variables: %s\n\n", strings.Join(parts, ", "))
	}
	changed := changedStages(d)
	if len(changed) == 0 {
		return
	}
	fmt.Fprintln(w, "| stage | change | memory/GPU | step time | tokens/s | MFU | cost | numerics | checkpoints |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, st := range changed {
		cells := []string{"`" + st.Address + "`", changeCell(st)}
		for _, name := range tableMetrics {
			cells = append(cells, metricCell(st.Estimate, name))
		}
		cells = append(cells, numericsCell(st.Numerics), checkpointCell(st.Checkpoint))
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	for _, st := range changed {
		var text bytes.Buffer
		writeStageDiffHuman(&text, st, newPalette(false))
		fmt.Fprintf(w, "<details><summary><code>%s</code> %s</summary>\n\n```text\n%s```\n\n</details>\n\n", st.Address, st.Status, text.String())
	}
}

func changedStages(d *plandiff.Diff) []*plandiff.Stage {
	var out []*plandiff.Stage
	for _, st := range d.Stages {
		if st.Status != plandiff.StatusUnchanged {
			out = append(out, st)
		}
	}
	return out
}

// summaryPhrase counts the stages per status, leaving out zeros.
func summaryPhrase(d *plandiff.Diff) string {
	if !d.HasChanges() {
		return "no changes"
	}
	s := d.Summary
	var parts []string
	for _, c := range []struct {
		n    int
		word string
	}{{s.Added, "added"}, {s.Removed, "removed"}, {s.Replaced, "replaced"}, {s.Changed, "changed"}, {s.Unchanged, "unchanged"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.word))
		}
	}
	if len(d.Variables) > 0 {
		parts = append(parts, fmt.Sprintf("%d variable(s) changed", len(d.Variables)))
	}
	return strings.Join(parts, ", ")
}

// writeMarkdownWarnings calls out what a reviewer must not miss: memory
// crossing a limit and traffic moving onto a slower link.
func writeMarkdownWarnings(w io.Writer, d *plandiff.Diff) {
	var lines []string
	for _, st := range d.Stages {
		if st.Estimate != nil && st.Estimate.MemoryLimit != nil && st.Estimate.MemoryLimit.New != plandiff.MemoryFits {
			lines = append(lines, fmt.Sprintf("`%s`: %s", st.Address, st.Estimate.MemoryLimit.Message))
		}
		if st.Layout != nil {
			for _, g := range st.Layout.Groups {
				if g.NewLink == layout.LinkNetwork && g.OldLink != layout.LinkNetwork {
					lines = append(lines, fmt.Sprintf("`%s`: %s traffic now crosses the network", st.Address, strings.ToUpper(g.Kind)))
				}
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "> [!WARNING]")
	for _, l := range lines {
		fmt.Fprintf(w, "> - %s\n", mdEscape(l))
	}
	fmt.Fprintln(w)
}

// changeCell is the status and, for a replaced stage, what changes.
func changeCell(st *plandiff.Stage) string {
	var what []string
	if st.Plugin != nil {
		what = append(what, "plugin")
	}
	for _, c := range st.Arguments {
		what = append(what, c.Path)
	}
	for _, section := range []struct {
		name string
		n    int
	}{{"hardware", len(st.Hardware)}, {"model", len(st.Model)}} {
		if section.n > 0 {
			what = append(what, section.name)
		}
	}
	if st.Layout != nil {
		for _, c := range st.Layout.Changes {
			if c.Path == "name" {
				continue
			}
			what = append(what, fmt.Sprintf("%s %s → %s", c.Path, valueText(c.Old), valueText(c.New)))
		}
	}
	if st.Numerics != nil && len(st.Numerics.Upstream) > 0 {
		what = append(what, "upstream data")
	}
	for _, section := range []struct {
		name string
		n    int
	}{{"depends_on", btoi(st.DependsOn != nil)}, {"NCCL env", len(st.NCCLEnv)}, {"executor", len(st.Executor)}} {
		if section.n > 0 {
			what = append(what, section.name)
		}
	}
	if len(what) == 0 {
		return st.Status
	}
	return st.Status + ": " + mdEscape(strings.Join(what, ", "))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func metricCell(e *plandiff.Estimate, name string) string {
	if e == nil {
		return ""
	}
	for _, m := range e.Metrics {
		if m.Name == name {
			return strings.NewReplacer("->", "→", "  (", " (").Replace(metricText(m))
		}
	}
	return ""
}

func numericsCell(n *plandiff.Numerics) string {
	switch {
	case n == nil:
		return ""
	case n.PerformanceOnly:
		return "performance-only"
	}
	var what []string
	for _, c := range n.Changes {
		what = append(what, c.Path)
	}
	if len(n.Upstream) > 0 {
		what = append(what, "data")
	}
	verdict := "**changes**: "
	if len(n.Changes) == 0 {
		verdict = "**may change**: "
	}
	return verdict + mdEscape(strings.Join(what, ", "))
}

func checkpointCell(c *plandiff.Checkpoint) string {
	switch {
	case c == nil:
		return ""
	case c.Verdict == plandiff.CheckpointResume:
		return "resume"
	}
	return "**" + c.Verdict + "**"
}

// mdEscape keeps text from breaking a table cell or turning into markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;").Replace(s)
}

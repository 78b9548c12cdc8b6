package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/report"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// Pacing of the human display.
const (
	// liveRefresh is how often the terminal display is redrawn.
	liveRefresh = 200 * time.Millisecond
	// plainStatusEvery is how often plain output repeats a stage's
	// progress and metrics; log lines print as they come.
	plainStatusEvery = 5 * time.Second
	progressBarWidth = 20
)

// applyHuman renders an apply for people. On a terminal (live) the running
// stages are one redrawn line each under the lines that stay; otherwise
// every line is printed once, with a timestamp.
type applyHuman struct {
	env    *cliEnv
	pal    *palette
	colour bool
	live   bool
	now    func() time.Time

	mu      sync.Mutex
	running map[string]*stageProgress
	// lastStatus is when plain output last printed a stage's status.
	lastStatus map[string]time.Time
	drawn      int // live lines on screen below the permanent ones
	started    time.Time
	done       chan struct{}
	closeOnce  sync.Once
}

func newApplyHuman(env *cliEnv, colour, live bool) *applyHuman {
	v := &applyHuman{env: env, pal: newPalette(colour), colour: colour, live: live, now: time.Now, running: map[string]*stageProgress{},
		lastStatus: map[string]time.Time{}, done: make(chan struct{})}
	if live {
		go v.refresh()
	}
	return v
}

func (v *applyHuman) refresh() {
	t := time.NewTicker(liveRefresh)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			v.mu.Lock()
			v.redraw(nil)
			v.mu.Unlock()
		case <-v.done:
			return
		}
	}
}

// redraw prints lines that stay, then the running stages' lines; v.mu is
// held. Plain output prints only the lines that stay, with a timestamp.
func (v *applyHuman) redraw(lines []string) {
	w := v.env.stdout
	if !v.live {
		stamp := v.pal.dim.Sprint(v.now().Format("15:04:05"))
		for _, l := range lines {
			fmt.Fprintf(w, "%s %s\n", stamp, l)
		}
		return
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", v.drawn)
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	live := v.liveLines()
	for _, l := range live {
		b.WriteString(l + "\n")
	}
	v.drawn = len(live)
	io.WriteString(w, b.String())
}

// liveLines are the running stages, by address.
func (v *applyHuman) liveLines() []string {
	addrs := make([]string, 0, len(v.running))
	for a := range v.running {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	width := 0
	for _, a := range addrs {
		width = max(width, len(a))
	}
	now := v.now()
	var out []string
	for _, a := range addrs {
		p := v.running[a]
		line := fmt.Sprintf("  %s %-*s %s %6s  %s", v.pal.cyan.Sprint("~"), width+6, "stage."+a, p.bar(progressBarWidth),
			shortDuration(now.Sub(p.started)), truncate(p.status(), 100))
		out = append(out, strings.TrimRight(line, " "))
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func (v *applyHuman) StageStarted(sp *engine.StagePlan, at time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.running[sp.Address] = newStageProgress(sp.Address, at)
	v.lastStatus[sp.Address] = at
	v.redraw([]string{fmt.Sprintf("%s started %s", v.pal.bold.Sprint("stage."+sp.Address),
		v.pal.dim.Sprintf("(%s, plugin %s %s)", sp.Action, sp.Plugin.Name, sp.Plugin.Version))})
}

func (v *applyHuman) StageEvent(address string, e api.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	p := v.running[address]
	if p == nil {
		return
	}
	p.update(e)
	var lines []string
	switch {
	case e.Log != nil && (!v.live || e.Log.Level == "warn" || e.Log.Level == "error"):
		for _, l := range strings.Split(strings.TrimRight(e.Log.Message, "\n"), "\n") {
			lines = append(lines, fmt.Sprintf("stage.%s: %s", address, v.levelTag(e.Log.Level)+l))
		}
	case e.Artifact != nil:
		lines = append(lines, fmt.Sprintf("stage.%s: artifact %s at %s (%s)", address, e.Artifact.Name, e.Artifact.Path, artifactSize(e.Artifact)))
	case !v.live && (e.Progress != nil || e.Metric != nil) && v.now().Sub(v.lastStatus[address]) >= plainStatusEvery:
		v.lastStatus[address] = v.now()
		lines = append(lines, fmt.Sprintf("stage.%s: %s", address, p.status()))
	}
	if len(lines) > 0 {
		v.redraw(lines)
	}
}

func (v *applyHuman) levelTag(level string) string {
	switch level {
	case "warn":
		return v.pal.yellow.Sprint("warning: ")
	case "error":
		return v.pal.red.Sprint("error: ")
	}
	return ""
}

// artifactSize is a file's size, or a folder's file count and their size.
func artifactSize(a *api.Artifact) string {
	if a.Files > 0 {
		return fmt.Sprintf("%d files, %s", a.Files, bytesText(a.Bytes))
	}
	return bytesText(a.Bytes)
}

func bytesText(b int64) string {
	if b >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", b)
}

func (v *applyHuman) StageFinished(r *engine.StageResult) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.running, r.Address)
	line := fmt.Sprintf("%s %s", v.pal.bold.Sprint("stage."+r.Address), v.outcomeText(r.Outcome))
	if d := r.Duration(); d > 0 {
		line += " after " + shortDuration(d)
	}
	if r.Reason != "" && r.Outcome != engine.OutcomeUnchanged {
		line += ": " + r.Reason
	}
	v.redraw([]string{line})
}

func (v *applyHuman) outcomeText(outcome string) string {
	switch outcome {
	case engine.OutcomeSucceeded:
		return v.pal.green.Sprint(outcome)
	case engine.OutcomeFailed, engine.OutcomeInterrupted:
		return v.pal.red.Sprint(outcome)
	case engine.OutcomeSkipped:
		return v.pal.yellow.Sprint(outcome)
	}
	return v.pal.dim.Sprint(outcome)
}

func (v *applyHuman) Plan(plan *engine.Plan) {
	writePlanHuman(v.env.stdout, plan, v.pal)
}

func (v *applyHuman) NoChanges(plan *engine.Plan) {
	fmt.Fprintf(v.env.stdout, "%s Every one of the %d stage(s) is unchanged since the last apply; nothing to run.\n",
		v.pal.green.Sprint("No changes."), len(plan.Stages))
}

func (v *applyHuman) Started(plan *engine.Plan) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.started = v.now()
	v.redraw([]string{fmt.Sprintf("Applying %s: %d to create, %d to replace, %d unchanged.", plan.Workload,
		plan.Summary.Create, plan.Summary.Replace, plan.Summary.NoOp)})
}

func (v *applyHuman) Interrupted() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.redraw([]string{v.pal.yellow.Sprint("Interrupt received: stopping the running stages. Press Ctrl-C again to quit at once.")})
}

func (v *applyHuman) Finished(res *engine.ApplyResult, sources map[string][]byte) {
	v.Close()
	w := v.env.stdout
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%s %d succeeded, %d unchanged, %d failed, %d interrupted, %d skipped, in %s.\n",
		v.pal.bold.Sprint("Apply finished:"), res.Count(engine.OutcomeSucceeded), res.Count(engine.OutcomeUnchanged),
		res.Count(engine.OutcomeFailed), res.Count(engine.OutcomeInterrupted), res.Count(engine.OutcomeSkipped),
		shortDuration(v.now().Sub(v.started)))
	writeApplyTable(w, res, v)
	shown := map[string]bool{}
	for _, r := range res.Stages {
		if diags := unshownWarnings(r.Diagnostics, shown); len(diags) > 0 {
			writeDiagnostics(v.env.stderr, diags, sources, v.colour)
		}
	}
	writeApplyOutputs(w, res.Outputs)
}

// unshownWarnings drops the warnings an earlier stage gave in the same
// words, and records the rest in shown: a warning about the machine (its
// NCCL patch levels, say) that every training stage gives is said once per
// apply. Errors are kept, each belonging to its stage.
func unshownWarnings(diags hcl.Diagnostics, shown map[string]bool) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		key := d.Summary + "\x00" + d.Detail
		if d.Severity == hcl.DiagWarning && shown[key] {
			continue
		}
		if d.Severity == hcl.DiagWarning {
			shown[key] = true
		}
		out = append(out, d)
	}
	return out
}

// writeApplyTable lists every stage with its outcome and duration, and
// the log of each that did not succeed.
func writeApplyTable(w io.Writer, res *engine.ApplyResult, v *applyHuman) {
	width := 0
	for _, r := range res.Stages {
		width = max(width, len(r.Address)+6)
	}
	for _, r := range res.Stages {
		dur := ""
		if d := r.Duration(); d > 0 {
			dur = shortDuration(d)
		}
		line := fmt.Sprintf("  %-*s  %-11s %8s", width, "stage."+r.Address, r.Outcome, dur)
		if r.Outcome != engine.OutcomeSucceeded && r.Reason != "" {
			line += "  " + r.Reason
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		if r.LogPath != "" && r.Outcome != engine.OutcomeSucceeded {
			fmt.Fprintf(w, "  %-*s  log: %s\n", width, "", r.LogPath)
		}
		if r.Outcome == engine.OutcomeSucceeded {
			writeStageFigures(w, width, r)
		}
	}
}

// writeStageFigures shows under a stage that ran its key outputs and, for
// a training stage, the plan against the measurement with the error.
func writeStageFigures(w io.Writer, width int, r *engine.StageResult) {
	if key := report.KeyOutputs(r.Outputs); len(key) > 0 {
		fmt.Fprintf(w, "  %-*s  %s\n", width, "", strings.Join(key, " "))
	}
	var plan []string
	for _, c := range report.Compare(r.Plan, r.Outputs) {
		plan = append(plan, c.Text())
	}
	if len(plan) > 0 {
		fmt.Fprintf(w, "  %-*s  plan -> measured: %s\n", width, "", strings.Join(plan, ", "))
	}
}

func writeApplyOutputs(w io.Writer, outputs []engine.PlanOutput) {
	if len(outputs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nOutputs:")
	for _, o := range outputs {
		switch {
		case o.Sensitive:
			fmt.Fprintf(w, "  %s = (sensitive)\n", o.Name)
		case o.Known:
			fmt.Fprintf(w, "  %s = %s\n", o.Name, o.Value)
		default:
			fmt.Fprintf(w, "  %s = (not known: a stage it reads did not run)\n", o.Name)
		}
	}
}

func (v *applyHuman) Diagnostics(diags hcl.Diagnostics, sources map[string][]byte) {
	if len(diags) == 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	writeDiagnostics(v.env.stderr, diags, sources, v.colour)
	if n := countErrors(diags); n > 0 {
		fmt.Fprintf(v.env.stderr, "%d error(s) found.\n", n)
	}
}

func (v *applyHuman) Error(err error) {
	fmt.Fprintf(v.env.stderr, "Error: %s\n", err)
}

func (v *applyHuman) Close() {
	v.closeOnce.Do(func() { close(v.done) })
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.live && v.drawn > 0 {
		fmt.Fprintf(v.env.stdout, "\x1b[%dA\x1b[J", v.drawn)
		v.drawn = 0
	}
}

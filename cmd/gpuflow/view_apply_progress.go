package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// stageProgress is what the display knows of a running stage: its latest
// progress, the rate and ETA derived from it, its latest metrics and log.
type stageProgress struct {
	address string
	started time.Time

	label, unit string
	done, total float64
	// since and sinceDone are the first progress report of this label,
	// from which the rate is taken (an average that does not jump about).
	since     time.Time
	sinceDone float64
	rate      float64 // units per second; zero until two reports

	metrics     map[string]*api.Metric
	metricOrder []string
	lastLog     string
}

func newStageProgress(address string, at time.Time) *stageProgress {
	return &stageProgress{address: address, started: at, metrics: map[string]*api.Metric{}}
}

func (p *stageProgress) update(e api.Event) {
	switch {
	case e.Progress != nil:
		p.progress(e.Time, e.Progress)
	case e.Metric != nil:
		if _, seen := p.metrics[e.Metric.Name]; !seen {
			p.metricOrder = append(p.metricOrder, e.Metric.Name)
		}
		m := *e.Metric
		p.metrics[m.Name] = &m
	case e.Log != nil:
		p.lastLog = lastLine(e.Log.Message)
	}
}

func (p *stageProgress) progress(at time.Time, pr *api.Progress) {
	if pr.Label != p.label || p.since.IsZero() || pr.Done < p.done {
		p.label, p.since, p.sinceDone, p.rate = pr.Label, at, pr.Done, 0
	} else if dt := at.Sub(p.since).Seconds(); dt > 0 {
		p.rate = (pr.Done - p.sinceDone) / dt
	}
	p.done, p.total, p.unit = pr.Done, pr.Total, pr.Unit
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// eta is the time left at the current rate; ok is false when unknown.
func (p *stageProgress) eta() (time.Duration, bool) {
	if p.total <= 0 || p.rate <= 0 || p.done >= p.total {
		return 0, false
	}
	return time.Duration((p.total - p.done) / p.rate * float64(time.Second)), true
}

// status is the progress, rate, ETA and metrics in one line, without the
// bar: "steps 30/100 step (30%), 2.5 step/s, ETA 28s, loss=2.31".
func (p *stageProgress) status() string {
	var parts []string
	if p.label != "" || p.done > 0 || p.total > 0 {
		parts = append(parts, p.amount())
	}
	if p.rate > 0 {
		parts = append(parts, fmt.Sprintf("%s %s/s", number(p.rate), unitOr(p.unit)))
	}
	if eta, ok := p.eta(); ok {
		parts = append(parts, "ETA "+shortDuration(eta))
	}
	if m := p.metricText(); m != "" {
		parts = append(parts, m)
	}
	if len(parts) == 0 && p.lastLog != "" {
		parts = append(parts, p.lastLog)
	}
	return strings.Join(parts, ", ")
}

func (p *stageProgress) amount() string {
	s := number(p.done)
	if p.total > 0 {
		s += "/" + number(p.total)
	}
	if p.unit != "" {
		s += " " + p.unit
	}
	if p.total > 0 {
		s += fmt.Sprintf(" (%.0f%%)", 100*p.done/p.total)
	}
	if p.label != "" {
		s = p.label + " " + s
	}
	return s
}

func (p *stageProgress) metricText() string {
	var parts []string
	for _, name := range p.metricOrder {
		m := p.metrics[name]
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("%s=%s %s", name, number(m.Value), m.Unit)))
	}
	return strings.Join(parts, " ")
}

// bar draws a progress bar of width cells, or blanks as wide when the
// total is unknown, so the columns stay aligned.
func (p *stageProgress) bar(width int) string {
	if p.total <= 0 {
		return strings.Repeat(" ", width+2)
	}
	filled := int(math.Round(float64(width) * min(p.done/p.total, 1)))
	return "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]"
}

func unitOr(u string) string {
	if u == "" {
		return "units"
	}
	return u
}

// number prints a value with up to four significant digits.
func number(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// shortDuration rounds for people: 850ms, 12.3s, 4m05s, 2h10m.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

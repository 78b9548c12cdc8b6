package report

import (
	"fmt"

	"github.com/gpuflow/gpuflow/engine/runlog"
	"github.com/gpuflow/gpuflow/plugins/api/stats"
)

// training draws loss, throughput, MFU and memory per rank, and sets the
// plan beside the measurement.
func (in stageInput) training(sec *Section) {
	plan := in.stage.Plan
	if f, ok := in.lines("Loss per step", "loss", 1, "loss", "valid_loss"); ok {
		sec.Figures = append(sec.Figures, f)
	}
	if f, ok := in.lines("Throughput per step", "tokens/s", 1, "tokens_per_s"); ok {
		if plan != nil {
			f.Refs = []Ref{{Name: "plan", Y: plan.TokensPerS}}
		}
		sec.Figures = append(sec.Figures, f)
	}
	if f, ok := in.lines("MFU per step", "MFU (%)", 100, "mfu"); ok {
		if plan != nil {
			f.Refs = []Ref{{Name: "plan", Y: 100 * plan.MFU}}
		}
		sec.Figures = append(sec.Figures, f)
	}
	if f, ok := in.lines("Loss scale per step (fp16)", "loss scale", 1, "loss_scale"); ok {
		sec.Figures = append(sec.Figures, f)
	}
	var perRank []float64
	if output(in.stage, "peak_memory_bytes_per_rank", &perRank) && len(perRank) > 0 {
		f := Figure{Title: "Peak memory per rank", YLabel: "GiB", Kind: Bars, Series: []Series{{Name: "measured"}}}
		for rank, b := range perRank {
			f.Labels = append(f.Labels, fmt.Sprintf("rank %d", rank))
			f.Series[0].Y = append(f.Series[0].Y, b/gib)
		}
		if plan != nil {
			f.Refs = []Ref{{Name: "plan", Y: float64(plan.MemoryBytes) / gib}}
		}
		sec.Figures = append(sec.Figures, f)
	}
	if plan != nil {
		sec.Tables = append(sec.Tables, in.planTable())
	} else {
		sec.Notes = append(sec.Notes, "State holds no plan for this run (it was applied by a gpuflow that did not record one), so there is nothing to compare with.")
	}
	sec.Tables = append(sec.Tables, in.outputsTable("Results", "final_loss", "valid_loss", "valid_perplexity", "steps", "tokens", "resumed_from_step",
		"loss_scale", "skipped_steps"))
}

// lines makes a per-step figure of the named metrics, scaled; ok is false
// when the run reported none of them.
func (in stageInput) lines(title, ylabel string, scale float64, names ...string) (Figure, bool) {
	f := Figure{Title: title, XLabel: "step", YLabel: ylabel}
	for _, name := range names {
		s, ok := in.series[name]
		if !ok {
			continue
		}
		line := Series{Name: name}
		for i, v := range s.Values {
			line.X, line.Y = append(line.X, float64(s.Steps[i])), append(line.Y, scale*v)
		}
		f.Series = append(f.Series, line)
	}
	return f, len(f.Series) > 0
}

// planTable sets each predicted figure beside the measured one. Step time
// is the median of the run's steps, so that the first (compiling) steps do
// not weigh on it.
func (in stageInput) planTable() Table {
	t := Table{Title: "Plan against measurement", Header: []string{"figure", "plan", "measured", "error"}}
	rows := Compare(in.stage.Plan, in.stage.Outputs)
	if step, ok := median(in.series["step_time"]); ok {
		rows = append(rows, Compared{Figure: "step time (s, median)", Plan: in.stage.Plan.StepTimeS, Measured: step})
	}
	for _, c := range rows {
		t.Rows = append(t.Rows, []string{c.Figure, num(c.Plan), num(c.Measured), c.Error()})
	}
	return t
}

// median is the series' median, and whether it has values.
func median(s *runlog.Series) (float64, bool) {
	if s == nil || len(s.Values) == 0 {
		return 0, false
	}
	return stats.Median(s.Values), true
}

// outputsTable lists the named numeric outputs the stage has.
func (in stageInput) outputsTable(title string, names ...string) Table {
	t := Table{Title: title, Header: []string{"output", "value"}}
	for _, name := range names {
		var v float64
		if output(in.stage, name, &v) {
			t.Rows = append(t.Rows, []string{name, num(v)})
		}
	}
	return t
}

package report

import "fmt"

// evalMeasures are an eval stage's measures and the expect threshold on
// each, an upper bound or a lower one. The stage reports both as metrics
// (the threshold as expect.NAME), which state keeps when a threshold
// fails the stage and its outputs are dropped.
var evalMeasures = []struct {
	measure, threshold string
	upper              bool
}{
	{"valid_loss", "max_valid_loss", true},
	{"valid_perplexity", "max_perplexity", true},
	{"accuracy", "min_accuracy", false},
	{"accuracy_norm", "min_accuracy_norm", false},
}

// evaluation tabulates an eval stage's measures beside their thresholds,
// then what it evaluated.
func (in stageInput) evaluation(sec *Section) {
	t := Table{Title: "Measures", Header: []string{"measure", "value", "threshold", "outcome"}}
	for _, e := range evalMeasures {
		v, ok := in.stage.Metrics[e.measure]
		if !ok {
			continue
		}
		row := []string{e.measure, num(v.Last), "", ""}
		if b, ok := in.stage.Metrics["expect."+e.threshold]; ok {
			op, pass := "<=", v.Last <= b.Last
			if !e.upper {
				op, pass = ">=", v.Last >= b.Last
			}
			row[2] = fmt.Sprintf("%s %s", op, num(b.Last))
			row[3] = map[bool]string{true: "passed", false: "failed"}[pass]
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		sec.Notes = append(sec.Notes, "The run reported no measures.")
		return
	}
	sec.Tables = append(sec.Tables, t)
	if counts := in.outputsTable("Evaluated", "valid_tokens", "questions", "prompts", "generated_tokens"); len(counts.Rows) > 0 {
		var path string
		if output(in.stage, "completions", &path) && path != "" {
			counts.Rows = append(counts.Rows, []string{"completions", path})
		}
		sec.Tables = append(sec.Tables, counts)
	}
}

package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// evalResult is what the evaluator's "eval" event reports.
type evalResult struct {
	ValidLoss       float64 `json:"valid_loss"`
	ValidPerplexity float64 `json:"valid_perplexity"`
	ValidTokens     int64   `json:"valid_tokens"`
	Questions       int     `json:"questions"`
	Prompts         int     `json:"prompts"`
	GeneratedTokens int64   `json:"generated_tokens"`
	EvalTimeS       float64 `json:"eval_time_s"`
}

// measures are an evaluation's figures by output name; a measure the
// stage did not take is absent.
type measures struct {
	values map[string]float64
	counts map[string]int64
}

// measures gathers the evaluator's figures, scores the questions and
// writes the completions as text.
func (r *evalRun) measures(res evalResult) (measures, api.Diagnostics) {
	m := measures{values: map[string]float64{}, counts: map[string]int64{}}
	if len(r.cfg.Data) > 0 {
		m.values["valid_loss"], m.values["valid_perplexity"] = res.ValidLoss, res.ValidPerplexity
		m.counts["valid_tokens"] = res.ValidTokens
	}
	if r.cfg.Choices != nil {
		acc, norm, err := r.score()
		if err != nil {
			return m, api.Diagnostics{ioDiagnostic("Cannot read the evaluator's scores", err)}
		}
		m.values["accuracy"], m.values["accuracy_norm"] = acc, norm
		m.counts["questions"] = int64(len(r.questions))
	}
	if r.cfg.Generate != nil {
		if err := r.writeCompletions(); err != nil {
			return m, api.Diagnostics{ioDiagnostic("Cannot write the completions", err)}
		}
		m.counts["prompts"] = int64(len(r.prompts))
		m.counts["generated_tokens"] = res.GeneratedTokens
	}
	return m, nil
}

// choiceScores is one line of the evaluator's scores file.
type choiceScores struct {
	LogLikelihoods []float64 `json:"loglikelihoods"`
	Greedy         []bool    `json:"greedy"`
}

// score reads the choices' log-likelihoods and computes lm-evaluation-
// harness's acc (the likeliest choice is the label) and acc_norm (the
// same after dividing each log-likelihood by the choice's length in bytes).
func (r *evalRun) score() (acc, accNorm float64, err error) {
	var scores []choiceScores
	err = eachLine(r.cfg.Choices.Scores, func(line []byte, _ int) error {
		var s choiceScores
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		scores = append(scores, s)
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if len(scores) != len(r.questions) {
		return 0, 0, fmt.Errorf("%s scores %d questions of %d", r.cfg.Choices.Scores, len(scores), len(r.questions))
	}
	var right, rightNorm int
	for i, q := range r.questions {
		ll := scores[i].LogLikelihoods
		if len(ll) != len(q.Choices) {
			return 0, 0, fmt.Errorf("%s: question %d has %d scores for %d choices", r.cfg.Choices.Scores, i+1, len(ll), len(q.Choices))
		}
		norm := make([]float64, len(ll))
		for j, c := range q.Choices {
			norm[j] = ll[j] / float64(max(1, len(c)))
		}
		if argmax(ll) == *q.Label {
			right++
		}
		if argmax(norm) == *q.Label {
			rightNorm++
		}
	}
	n := float64(len(r.questions))
	return float64(right) / n, float64(rightNorm) / n, nil
}

// argmax is the index of the largest value, the first of equals (as
// numpy's argmax).
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// writeCompletions decodes the evaluator's tokens and writes each prompt's
// fields with its completion, the finish reason and the token count.
func (r *evalRun) writeCompletions() error {
	var out bytes.Buffer
	i := 0
	err := eachLine(r.cfg.Generate.Completions, func(line []byte, _ int) error {
		var c struct {
			Tokens []uint32 `json:"tokens"`
			Finish string   `json:"finish"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		if i >= len(r.prompts) {
			return fmt.Errorf("more completions than the %d prompts", len(r.prompts))
		}
		text, err := r.decoder.Decode(c.Tokens)
		if err != nil {
			return err
		}
		rec := r.prompts[i].fields
		rec["completion"], _ = json.Marshal(string(text))
		rec["finish"], _ = json.Marshal(c.Finish)
		rec["completion_tokens"], _ = json.Marshal(len(c.Tokens))
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		out.Write(append(b, '\n'))
		i++
		return nil
	})
	if err == nil && i != len(r.prompts) {
		err = fmt.Errorf("%d completions for %d prompts", i, len(r.prompts))
	}
	if err != nil {
		return err
	}
	return writeFileAtomic(r.completionsPath, out.Bytes())
}

// evalOutputs are every eval stage's outputs; a measure the stage did not
// take is null.
var evalOutputs = []string{"valid_loss", "valid_perplexity", "accuracy", "accuracy_norm"}

var evalCounts = []string{"valid_tokens", "questions", "prompts", "generated_tokens"}

func (m measures) outputs(completions string) map[string]cty.Value {
	out := map[string]cty.Value{"completions": cty.StringVal(completions)}
	for _, k := range evalOutputs {
		out[k] = cty.NullVal(cty.Number)
		if v, ok := m.values[k]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = cty.NumberFloatVal(v)
		}
	}
	for _, k := range evalCounts {
		out[k] = cty.NumberIntVal(m.counts[k])
	}
	return out
}

// check compares the measures with the expect block's thresholds; a
// measure that is not a number misses every threshold on it.
func (r *evalRun) check(m measures) api.Diagnostics {
	var diags api.Diagnostics
	for _, x := range expectations {
		bound, set := r.expect[x.attr]
		if !set {
			continue
		}
		v := m.values[x.measure]
		var miss string
		switch {
		case math.IsNaN(v):
			miss = fmt.Sprintf("The model's %s is not a number", x.measure)
		case x.upper && v > bound:
			miss = fmt.Sprintf("The model measured %s %s, above %s = %s", x.measure, figure(v), x.attr, figure(bound))
		case !x.upper && v < bound:
			miss = fmt.Sprintf("The model measured %s %s, below %s = %s", x.measure, figure(v), x.attr, figure(bound))
		}
		if miss != "" {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Evaluation missed " + x.attr,
				Detail: miss + ". The stage failed, so stages that read its outputs do not run; the next apply evaluates again.",
				Path:   cty.GetAttrPath("expect").GetAttr(x.attr)})
		}
	}
	return diags
}

// send reports each measure, and each threshold as expect.NAME, as a
// metric: a run's record keeps its metrics even when a threshold fails
// the stage, so the report shows both.
func (m measures) send(sink api.EventSink, expect map[string]float64) {
	t := time.Now()
	metric := func(name string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			sink.Send(api.Event{Time: t, Metric: &api.Metric{Name: name, Value: v}})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.values)) {
		metric(k, m.values[k])
	}
	for _, x := range expectations {
		if b, ok := expect[x.attr]; ok {
			metric("expect."+x.attr, b)
		}
	}
}

// describe is the measures as one line for the log.
func (m measures) describe() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m.values)) {
		parts = append(parts, k+" "+figure(m.values[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(m.counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m.counts[k]))
	}
	return "measured: " + strings.Join(parts, ", ")
}

// figure prints a measure with the digits a threshold is compared at.
func figure(v float64) string { return fmt.Sprintf("%.4g", v) }

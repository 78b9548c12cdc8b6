package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpuflow/gpuflow/engine/runlog"
)

// Run is one earlier run of a stage: what it was given and the last value
// of each metric it reported.
type Run struct {
	Stage, ID string
	// Inputs is nil for a run that recorded none.
	Inputs  *runlog.Inputs
	Metrics map[string]float64
	Units   map[string]string
}

// LoadRun reads one run folder under runsDir.
func LoadRun(runsDir, stage, id string) (*Run, error) {
	dir := filepath.Join(runsDir, stage, id)
	events, err := runlog.ReadEvents(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no run %s of stage %s under %s", id, stage, runsDir)
	}
	if err != nil {
		return nil, err
	}
	r := &Run{Stage: stage, ID: id, Metrics: map[string]float64{}, Units: map[string]string{}}
	for name, s := range runlog.MetricSeries(events) {
		r.Metrics[name], r.Units[name] = s.Values[len(s.Values)-1], s.Unit
	}
	r.Inputs, err = runlog.ReadInputs(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return r, nil
}

// KeyFigures are the run's last metric values as name=value, sorted.
func (r *Run) KeyFigures() string {
	var parts []string
	for _, name := range sortedKeys(r.Metrics) {
		parts = append(parts, name+"="+num(r.Metrics[name]))
	}
	return strings.Join(parts, " ")
}

// CompareRuns sets two runs side by side: the inputs that differ (each
// setting by its dotted path) and every metric's last value with the
// change from a to b.
func CompareRuns(a, b *Run) (inputs, results Table) {
	inputs = Table{Title: "Inputs that differ", Header: []string{"input", a.ID, b.ID}}
	if a.Inputs == nil || b.Inputs == nil {
		inputs.Rows = append(inputs.Rows, []string{"(not recorded)", recorded(a), recorded(b)})
	} else {
		fa, fb := flatten(a.Inputs.Config), flatten(b.Inputs.Config)
		for _, key := range sortedKeys(union(fa, fb)) {
			if fa[key] != fb[key] {
				inputs.Rows = append(inputs.Rows, []string{key, orNone(fa[key]), orNone(fb[key])})
			}
		}
	}
	results = Table{Title: "Results", Header: []string{"metric", a.ID, b.ID, "change"}}
	for _, name := range sortedKeys(union(a.Metrics, b.Metrics)) {
		va, okA := a.Metrics[name]
		vb, okB := b.Metrics[name]
		row := []string{name, "-", "-", "-"}
		if okA {
			row[1] = num(va)
		}
		if okB {
			row[2] = num(vb)
		}
		if okA && okB {
			row[3] = errorPct(va, vb)
		}
		results.Rows = append(results.Rows, row)
	}
	return inputs, results
}

func recorded(r *Run) string {
	if r.Inputs == nil {
		return "not recorded"
	}
	return "recorded"
}

func orNone(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func union[V any](a, b map[string]V) map[string]V {
	out := map[string]V{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// flatten turns a JSON object into dotted paths and the JSON of each leaf.
func flatten(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		flattenInto(out, "", v)
	}
	return out
}

func flattenInto(out map[string]string, prefix string, v any) {
	if m, ok := v.(map[string]any); ok {
		for k, sub := range m {
			path := k
			if prefix != "" {
				path = prefix + "." + k
			}
			flattenInto(out, path, sub)
		}
		return
	}
	if v == nil {
		return
	}
	b, _ := json.Marshal(v)
	out[prefix] = string(b)
}

package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/gpuflow/gpuflow/engine/state"
)

const gib = 1 << 30

// num formats a figure with as many digits as a reader compares.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// errorPct is the measurement's error against the prediction, signed.
func errorPct(plan, measured float64) string {
	if plan == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(measured-plan)/plan)
}

// bytesLabel writes a message size as nccl-tests' plots do: 1M, 256M, 1G.
func bytesLabel(b float64) string {
	for _, u := range []struct {
		suffix string
		size   float64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.size {
			return num(b/u.size) + u.suffix
		}
	}
	return num(b) + "B"
}

// output decodes one of a stage's outputs into v, reporting whether it was there.
func output(s *state.Stage, name string, v any) bool { return decode(s.Outputs, name, v) }

func decode(outputs map[string]json.RawMessage, name string, v any) bool {
	raw, ok := outputs[name]
	return ok && json.Unmarshal(raw, v) == nil
}

// metricsTable summarises every metric the run reported.
func metricsTable(m map[string]state.Metric) (Table, bool) {
	if len(m) == 0 {
		return Table{}, false
	}
	t := Table{Title: "Metrics", Header: []string{"metric", "last", "min", "max", "count", "unit"}}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		v := m[name]
		t.Rows = append(t.Rows, []string{name, num(v.Last), num(v.Min), num(v.Max), fmt.Sprint(v.Count), v.Unit})
	}
	return t, true
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

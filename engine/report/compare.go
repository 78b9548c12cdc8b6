package report

import (
	"encoding/json"

	"github.com/gpuflow/gpuflow/engine/state"
)

// Compared is one figure the plan predicted and a run measured.
type Compared struct {
	Figure         string
	Plan, Measured float64
}

// Error is the measurement's error against the plan, signed, in percent.
func (c Compared) Error() string { return errorPct(c.Plan, c.Measured) }

// Text writes the figures as "plan -> measured (error)".
func (c Compared) Text() string {
	return c.Figure + " " + num(c.Plan) + " -> " + num(c.Measured) + " (" + c.Error() + ")"
}

// Compare sets a training stage's prediction beside what its outputs
// measured: peak memory, tokens/s and MFU, those the outputs hold.
func Compare(p *state.Prediction, outputs map[string]json.RawMessage) []Compared {
	if p == nil {
		return nil
	}
	var out []Compared
	var mem, tps, mfu float64
	if decode(outputs, "peak_memory_bytes", &mem) {
		out = append(out, Compared{Figure: "peak memory per GPU (GiB)", Plan: float64(p.MemoryBytes) / gib, Measured: mem / gib})
	}
	if decode(outputs, "tokens_per_s", &tps) {
		out = append(out, Compared{Figure: "tokens/s", Plan: p.TokensPerS, Measured: tps})
	}
	if decode(outputs, "mfu", &mfu) {
		out = append(out, Compared{Figure: "MFU (%)", Plan: 100 * p.MFU, Measured: 100 * mfu})
	}
	return out
}

// KeyOutputs are a stage's numeric and true/false outputs as name=value,
// sorted: the figures a summary line shows (paths and tables are left to
// state show and the report).
func KeyOutputs(outputs map[string]json.RawMessage) []string {
	var out []string
	for _, name := range sortedKeys(outputs) {
		var v any
		if json.Unmarshal(outputs[name], &v) != nil {
			continue
		}
		switch v := v.(type) {
		case float64:
			out = append(out, name+"="+num(v))
		case bool:
			if v {
				out = append(out, name+"=true")
			} else {
				out = append(out, name+"=false")
			}
		}
	}
	return out
}

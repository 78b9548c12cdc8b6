package train

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// rulesJSON is the trainer's rule table: what it refuses to run, read by
// this plugin when it plans and applies a stage and by the trainer
// (trainer/rules.py) when it starts, so the three never disagree.
//
//go:embed trainer/rules.json
var rulesJSON []byte

// rule refuses a stage whose facts meet every condition.
type rule struct {
	Name    string      `json:"name"`
	Field   string      `json:"field"`
	When    []condition `json:"when"`
	Summary string      `json:"summary"`
	Reason  string      `json:"reason"`
}

// condition compares a fact with Value, or with the fact Ref names.
type condition struct {
	Fact  string `json:"fact"`
	Op    string `json:"op"`
	Value any    `json:"value"`
	Ref   string `json:"ref"`
}

var trainerRules = mustRules(rulesJSON)

func mustRules(b []byte) []rule {
	var t struct {
		Rules []rule `json:"rules"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		panic("trainer/rules.json: " + err.Error())
	}
	return t.Rules
}

// facts is what the rules read about a stage, keyed as rules.json names them.
type facts map[string]any

func stageFacts(m modelConfig, l api.Layout, lora bool, device string) facts {
	mb := 0
	if d := l.MicroBatch * l.DP; d > 0 {
		mb = l.GlobalBatch / d
	}
	return facts{"tp": l.TP, "pp": l.PP, "dp": l.DP, "cp": l.CP, "vp": max(l.VP, 1), "zero": l.ZeRO,
		"micro_batch": l.MicroBatch, "global_batch": l.GlobalBatch, "microbatches": mb, "fsdp": l.FSDP,
		"sequence_parallel": l.SequenceParallel, "precision": l.Precision, "recompute": l.Recompute,
		"tied": m.TiedEmbeddings, "lora": lora, "device": orDefault(device, deviceCUDA), "activation": m.Activation}
}

// refusals are the rules the facts break, in the table's order.
func (f facts) refusals() []rule {
	var out []rule
	for _, r := range trainerRules {
		if f.meets(r.When) {
			out = append(out, r)
		}
	}
	return out
}

func (f facts) meets(when []condition) bool {
	for _, c := range when {
		want := c.Value
		if c.Ref != "" {
			want = f[c.Ref]
		}
		if !compare(f[c.Fact], c.Op, want) {
			return false
		}
	}
	return true
}

// compare applies op to a fact and a value; numbers compare as numbers
// whether they came from Go or from JSON.
func compare(got any, op string, want any) bool {
	g, gNum := number(got)
	w, wNum := number(want)
	switch op {
	case "==":
		return got == want || (gNum && wNum && g == w)
	case "!=":
		return !compare(got, "==", want)
	case ">":
		return gNum && wNum && g > w
	case "<":
		return gNum && wNum && g < w
	case "not_multiple_of":
		return gNum && wNum && w != 0 && int64(g)%int64(w) != 0
	}
	panic("trainer/rules.json: unknown op " + op)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// message fills the reason's {fact} placeholders.
func (f facts) message(r rule) string {
	s := r.Reason
	for k, v := range f {
		s = strings.ReplaceAll(s, "{"+k+"}", fmt.Sprint(v))
	}
	return s
}

// checkRules refuses what the rule table refuses, each diagnostic naming
// the rule and pointing at the attribute to change.
func checkRules(f facts) api.Diagnostics {
	var diags api.Diagnostics
	for _, r := range f.refusals() {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Trainer rule " + r.Name + ": " + r.Summary,
			Detail: f.message(r), Path: rulePath(r.Field)})
	}
	return diags
}

// rulePath is where a rule's field lives: the model or device argument,
// or an attribute of the layout.
func rulePath(field string) cty.Path {
	switch field {
	case "model", "device":
		return cty.GetAttrPath(field)
	}
	return cty.GetAttrPath("layout").GetAttr(field)
}

package train

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// ruleCasesFile holds what the plan refuses over every combination of
// ruleAxes; the trainer's own test (trainer/tests/test_rules.py) walks the
// same combinations and must refuse the same ones by the same rules.
var ruleCasesFile = filepath.Join("trainer", "tests", "rule_cases.json")

// ruleAxes are the layout, model and stage choices the rules can read, in
// the order both tests walk them.
var ruleAxes = []ruleAxis{
	{"tp", []any{1, 2}}, {"pp", []any{1, 2}}, {"vp", []any{1, 2}}, {"dp", []any{1, 2}}, {"cp", []any{1, 2}},
	{"fsdp", []any{false, true}}, {"global_batch", []any{2, 8}}, {"precision", []any{"bf16", "fp16", "fp8"}},
	{"recompute", []any{"none", "selective", "full"}}, {"tied", []any{false, true}}, {"lora", []any{false, true}},
	{"device", []any{"cuda", "cpu"}},
}

type ruleAxis struct {
	Name   string `json:"name"`
	Values []any  `json:"values"`
}

// ruleCases is the golden summary: how many combinations each rule
// refuses, how many run, and a digest of every combination's line.
type ruleCases struct {
	About     string         `json:"about"`
	Axes      []ruleAxis     `json:"axes"`
	Cases     int            `json:"cases"`
	Runs      int            `json:"runs"`
	RefusedBy map[string]int `json:"refused_by"`
	SHA256    string         `json:"sha256"`
}

// combinations lists every choice of one value per axis that the
// language allows (vp > 1 needs pp > 1: the engine refuses it earlier).
func combinations() []map[string]any {
	out := []map[string]any{{}}
	for _, a := range ruleAxes {
		var next []map[string]any
		for _, c := range out {
			for _, v := range a.Values {
				m := map[string]any{a.Name: v}
				for k, x := range c {
					m[k] = x
				}
				next = append(next, m)
			}
		}
		out = next
	}
	var allowed []map[string]any
	for _, c := range out {
		if c["vp"].(int) == 1 || c["pp"].(int) > 1 {
			allowed = append(allowed, c)
		}
	}
	return allowed
}

// caseLine is a combination and the rules the plan refuses it by.
func caseLine(c map[string]any, refused []string) string {
	var parts []string
	for _, a := range ruleAxes {
		parts = append(parts, fmt.Sprintf("%s=%v", a.Name, c[a.Name]))
	}
	verdict := "runs"
	if len(refused) > 0 {
		verdict = strings.Join(refused, ",")
	}
	return strings.Join(parts, " ") + ": " + verdict
}

// caseBody is the stage body the engine would send the plugin's
// validation for combination c.
func caseBody(c map[string]any) cty.Value {
	b := defaultBody(cty.StringVal("data/train"))
	b.micro, b.global, b.tied = 1, c["global_batch"].(int), c["tied"].(bool)
	attrs := b.value().AsValueMap()
	layout := attrs["layout"].AsValueMap()
	for _, k := range []string{"tp", "pp", "vp", "dp", "cp"} {
		layout[k] = n(c[k].(int))
	}
	layout["fsdp"] = cty.BoolVal(c["fsdp"].(bool))
	layout["precision"] = cty.StringVal(c["precision"].(string))
	layout["recompute"] = cty.StringVal(c["recompute"].(string))
	attrs["layout"] = cty.ObjectVal(layout)
	attrs["device"] = cty.StringVal(c["device"].(string))
	if c["lora"].(bool) {
		attrs["lora"] = cty.ObjectVal(map[string]cty.Value{"rank": n(8), "alpha": n(16), "targets": cty.ListVal([]cty.Value{cty.StringVal("q_proj")}),
			"dropout": cty.NullVal(cty.Number)})
	}
	return cty.ObjectVal(attrs)
}

// TestRuleTable plans every combination and holds the result to the
// golden summary the trainer's test checks too.
func TestRuleTable(t *testing.T) {
	got := ruleCases{About: "Every combination of axes the language allows, planned: what the rule table (rules.json) refuses. " +
		"sha256 is over one line per combination, 'name=value ...: rule,rule' or ': runs', each ending in a newline. " +
		"go test ./plugins/train -run TestRuleTable -update rewrites it.",
		Axes: ruleAxes, RefusedBy: map[string]int{}}
	h := sha256.New()
	for _, c := range combinations() {
		var refused []string
		args, diags := decodeArgs(caseBody(c))
		if diags.HasErrors() {
			t.Fatalf("%v: %v", c, diags)
		}
		for _, d := range planRules(args) {
			refused = append(refused, strings.SplitN(strings.TrimPrefix(d.Summary, "Trainer rule "), ":", 2)[0])
		}
		for _, r := range refused {
			got.RefusedBy[r]++
		}
		if len(refused) == 0 {
			got.Runs++
		}
		got.Cases++
		fmt.Fprintln(h, caseLine(c, refused))
	}
	got.SHA256 = hex.EncodeToString(h.Sum(nil))
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(ruleCasesFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(ruleCasesFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(b)+"\n"); diff != "" {
		t.Errorf("%s (-want +got):\n%s", ruleCasesFile, diff)
	}
}

// TestRuleTableRules: every rule in the table refuses some combination,
// so none is dead, and each names an attribute and a reason.
func TestRuleTableRules(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range combinations() {
		f := stageFacts(modelConfig{TiedEmbeddings: c["tied"].(bool), Activation: "swiglu"}, layoutOf(c), c["lora"].(bool), c["device"].(string))
		for _, r := range f.refusals() {
			seen[r.Name] = true
		}
	}
	for _, r := range trainerRules {
		if !seen[r.Name] {
			t.Errorf("rule %s refuses no combination", r.Name)
		}
		if r.Field == "" || r.Reason == "" || r.Summary == "" {
			t.Errorf("rule %s lacks a field, summary or reason", r.Name)
		}
	}
}

func layoutOf(c map[string]any) api.Layout {
	return api.Layout{TP: c["tp"].(int), PP: c["pp"].(int), VP: c["vp"].(int), DP: c["dp"].(int), CP: c["cp"].(int),
		FSDP: c["fsdp"].(bool), MicroBatch: 1, GlobalBatch: c["global_batch"].(int), Precision: c["precision"].(string),
		Recompute: c["recompute"].(string)}
}

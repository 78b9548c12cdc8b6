package train

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// TestValidateKnownUnsetAndUnknown: validation checks what is set, skips
// what is not known yet (at plan time, another stage's outputs) and tells
// both from what is left out.
func TestValidateKnownUnsetAndUnknown(t *testing.T) {
	t.Parallel()
	obj := func(m map[string]cty.Value) cty.Value { return cty.ObjectVal(m) }
	lora := func(rank cty.Value) cty.Value {
		return obj(map[string]cty.Value{"rank": rank, "alpha": n(16), "targets": cty.ListVal([]cty.Value{cty.StringVal("q_proj")}),
			"dropout": cty.NullVal(cty.Number)})
	}
	export := func(hf, peft cty.Value) cty.Value {
		return obj(map[string]cty.Value{"hf": hf, "peft": peft, "tokenizer": cty.NullVal(cty.String)})
	}
	null := cty.NullVal(cty.String)
	for name, tc := range map[string]struct {
		stage string
		attrs map[string]cty.Value
		want  []string
	}{
		"no budget":                      {"pretrain", map[string]cty.Value{"steps": cty.NullVal(cty.Number)}, []string{"No training budget"}},
		"a budget not known yet":         {"pretrain", map[string]cty.Value{"steps": cty.UnknownVal(cty.Number)}, nil},
		"two budgets":                    {"pretrain", map[string]cty.Value{"train_tokens": n(1000)}, []string{"Two training budgets"}},
		"a zero budget":                  {"pretrain", map[string]cty.Value{"steps": n(0)}, []string{"Invalid steps"}},
		"a learning rate not known yet":  {"pretrain", map[string]cty.Value{"lr": cty.UnknownVal(cty.Number)}, nil},
		"a zero learning rate":           {"pretrain", map[string]cty.Value{"lr": n(0)}, []string{"Invalid lr"}},
		"a schedule not known yet":       {"pretrain", map[string]cty.Value{"schedule": cty.UnknownVal(cty.String)}, nil},
		"an unknown schedule":            {"pretrain", map[string]cty.Value{"schedule": cty.StringVal("step")}, []string{"Unknown schedule"}},
		"a LoRA rank not known yet":      {"finetune", map[string]cty.Value{"lora": lora(cty.UnknownVal(cty.Number))}, nil},
		"a zero LoRA rank":               {"finetune", map[string]cty.Value{"lora": lora(n(0))}, []string{"Invalid LoRA rank"}},
		"a fraction of a LoRA rank":      {"finetune", map[string]cty.Value{"lora": lora(cty.NumberFloatVal(2.5))}, []string{"Not a whole number"}},
		"nothing to export":              {"pretrain", map[string]cty.Value{"export": export(null, null)}, []string{"Nothing to export"}},
		"an export folder not known yet": {"pretrain", map[string]cty.Value{"export": export(cty.UnknownVal(cty.String), null)}, nil},
		"adapters of a pretrain":         {"pretrain", map[string]cty.Value{"export": export(null, cty.StringVal("out"))}, []string{"No adapters to export"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := defaultBody(cty.StringVal("data"))
			if tc.stage == "finetune" {
				body.lora, body.base = lora(n(8)), cty.StringVal("base")
			}
			body.extraAttrs = tc.attrs
			if diff := cmp.Diff(tc.want, summaries(validate(tc.stage, body.value()))); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

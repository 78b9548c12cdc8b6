package train

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
)

func r50k(t *testing.T) *bpe.Encoder {
	t.Helper()
	tok, err := bpe.Open(filepath.Join("..", "dataprep", "bpe", "testdata", "vocab", "r50k_base.tiktoken.gz"), bpe.KindTiktoken, "")
	if err != nil {
		t.Fatal(err)
	}
	return tok.NewEncoder()
}

// A context's trailing space moves to the choice, as lm-evaluation-harness
// moves it, so " mat" is scored as one token whether or not the context
// ended in the space.
func TestEncodePairMovesTrailingSpace(t *testing.T) {
	enc := r50k(t)
	for name, tc := range map[string]struct{ context, choice string }{
		"space in the choice":  {"The cat sat on the", " mat"},
		"space in the context": {"The cat sat on the ", "mat"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cont := encodePair(enc, tc.context, tc.choice)
			if diff := cmp.Diff(enc.Encode(nil, "The cat sat on the"), ctx); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(enc.Encode(nil, " mat"), cont); diff != "" {
				t.Errorf("continuation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreIsAccAndAccNorm(t *testing.T) {
	label := func(i int) *int { return &i }
	qs := []question{
		// The longer right choice loses on its sum and wins per byte.
		{Context: "a", Choices: []string{" x", " a longer one"}, Label: label(1)},
		{Context: "b", Choices: []string{" y", " z"}, Label: label(0)},
	}
	dir := t.TempDir()
	scores := filepath.Join(dir, "scores.jsonl")
	if err := writeFileAtomic(scores, []byte("{\"loglikelihoods\":[-2,-6]}\n{\"loglikelihoods\":[-1,-3]}\n")); err != nil {
		t.Fatal(err)
	}
	r := &evalRun{questions: qs, cfg: evalConfig{Choices: &choicesFiles{Scores: scores}}}
	acc, norm, err := r.score()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{0.5, 1}, []float64{acc, norm}); diff != "" {
		t.Errorf("acc, acc_norm (-want +got):\n%s", diff)
	}
}

func TestCheckNamesEachMissedThreshold(t *testing.T) {
	m := measures{values: map[string]float64{"valid_loss": 2.5, "valid_perplexity": 12.18, "accuracy": 0.4, "accuracy_norm": 0.7}}
	const after = " The stage failed, so stages that read its outputs do not run; the next apply evaluates again."
	for name, tc := range map[string]struct {
		expect map[string]float64
		want   []string
	}{
		"all met":    {map[string]float64{"max_valid_loss": 3, "min_accuracy_norm": 0.7}, nil},
		"loss above": {map[string]float64{"max_valid_loss": 2}, []string{"The model measured valid_loss 2.5, above max_valid_loss = 2." + after}},
		"acc below":  {map[string]float64{"min_accuracy": 0.5, "max_perplexity": 20}, []string{"The model measured accuracy 0.4, below min_accuracy = 0.5." + after}},
		"both missed": {map[string]float64{"max_perplexity": 10, "min_accuracy": 0.5}, []string{
			"The model measured valid_perplexity 12.18, above max_perplexity = 10." + after,
			"The model measured accuracy 0.4, below min_accuracy = 0.5." + after}},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, d := range (&evalRun{expect: tc.expect}).check(m) {
				got = append(got, d.Detail)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateEval(t *testing.T) {
	obj := func(attrs map[string]cty.Value) cty.Value { return cty.ObjectVal(attrs) }
	null := cty.NullVal(cty.DynamicPseudoType)
	body := func(over map[string]cty.Value) cty.Value {
		attrs := map[string]cty.Value{"weights": cty.StringVal("ckpt"), "data": null, "tokens": cty.NullVal(cty.Number),
			"device": cty.NullVal(cty.String), "multiple_choice": null, "generate": null, "expect": null}
		for k, v := range over {
			attrs[k] = v
		}
		return obj(attrs)
	}
	for name, tc := range map[string]struct {
		body cty.Value
		want []string
	}{
		"loss only":      {body(map[string]cty.Value{"data": cty.StringVal("d")}), nil},
		"nothing":        {body(nil), []string{"Nothing to evaluate"}},
		"accuracy alone": {body(map[string]cty.Value{"data": cty.StringVal("d"), "expect": obj(map[string]cty.Value{"min_accuracy": cty.NumberFloatVal(0.5)})}), []string{"Nothing measures accuracy"}},
		"accuracy above one": {body(map[string]cty.Value{"multiple_choice": obj(map[string]cty.Value{"path": cty.StringVal("q")}),
			"expect": obj(map[string]cty.Value{"min_accuracy": cty.NumberFloatVal(50)})}), []string{"Invalid min_accuracy"}},
		"bad sampling": {body(map[string]cty.Value{"generate": obj(map[string]cty.Value{"prompts": cty.StringVal("p"), "max_new_tokens": cty.NumberFloatVal(1.5),
			"temperature": cty.NumberIntVal(-1), "top_p": cty.NumberIntVal(0)})}), []string{"Not a whole number", "Invalid temperature", "Invalid top_p"}},
		"unknown data": {body(map[string]cty.Value{"data": cty.UnknownVal(cty.DynamicPseudoType), "expect": obj(map[string]cty.Value{"max_valid_loss": cty.UnknownVal(cty.Number)})}), nil},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, d := range validateEval(tc.body) {
				got = append(got, d.Summary)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

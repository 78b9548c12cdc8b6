package train

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// TestValidation: what a stage validates on, from valid_data or from the
// valid split its data_prep stage wrote beside the training shards.
func TestValidation(t *testing.T) {
	t.Parallel()
	type want struct {
		valid       []string
		every, each int64
		diags       []string
	}
	tests := map[string]struct {
		manifest string // data/manifest.json, none when empty
		attrs    map[string]cty.Value
		want     want
	}{
		"the valid split beside the training shards": {
			manifest: `{"groups":[{"splits":{"train":{"megatron":"train_00000"},"valid":{"megatron":"valid_00000"}}},{"splits":{"valid":{"megatron":"valid_00001"}}}]}`,
			attrs:    map[string]cty.Value{"eval_every": n(10), "eval_batches": n(2)},
			want:     want{valid: []string{"data/valid_00000", "data/valid_00001"}, every: 10, each: 2},
		},
		"valid_data given": {
			manifest: `{"groups":[{"splits":{"valid":{"megatron":"valid_00000"}}}]}`,
			attrs:    map[string]cty.Value{"valid_data": cty.ObjectVal(map[string]cty.Value{"megatron": cty.ListVal([]cty.Value{cty.StringVal("held/out")})})},
			want:     want{valid: []string{"held/out"}, each: defaultEvalBatches},
		},
		"no manifest: no validation": {
			want: want{each: defaultEvalBatches},
		},
		"no valid split but eval_every": {
			manifest: `{"groups":[{"splits":{"train":{"megatron":"train_00000"}}}]}`,
			attrs:    map[string]cty.Value{"eval_every": n(5)},
			want:     want{every: 5, each: defaultEvalBatches, diags: []string{"warning: No validation data"}},
		},
		"an unreadable manifest": {
			manifest: `{"groups": [`,
			want:     want{each: defaultEvalBatches, diags: []string{"error: Cannot read the validation split"}},
		},
		"a manifest naming a missing shard": {
			manifest: `{"groups":[{"splits":{"valid":{"megatron":"gone"}}}]}`,
			want:     want{each: defaultEvalBatches, diags: []string{"error: Cannot read the validation split"}},
		},
		"valid_data that names no shard": {
			attrs: map[string]cty.Value{"valid_data": cty.StringVal("nowhere")},
			want:  want{each: defaultEvalBatches, diags: []string{"error: Validation data not found"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, p := range []string{"data/train_00000", "data/valid_00000", "data/valid_00001", "held/out"} {
				writeShard(t, filepath.Join(dir, p))
			}
			if tc.manifest != "" {
				if err := os.WriteFile(filepath.Join(dir, "data", dataprepManifest), []byte(tc.manifest), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			body := defaultBody(cty.StringVal("data/train_00000"))
			body.extraAttrs = tc.attrs
			cfg, _, diags := decodeRun(request(dir, "pretrain", "v", body.value(), "run-1"))
			var gotDiags []string
			for _, d := range diags {
				sev := "error"
				if d.Severity == api.Warning {
					sev = "warning"
				}
				gotDiags = append(gotDiags, sev+": "+d.Summary)
			}
			var valid []string
			for _, p := range cfg.ValidData {
				rel, _ := filepath.Rel(dir, p)
				valid = append(valid, rel)
			}
			got := want{valid: valid, every: cfg.EvalEvery, each: cfg.EvalBatches, diags: gotDiags}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("validation (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyValidates: validations stream as metrics of their step, and the
// last one becomes the stage's valid_loss and valid_perplexity.
func TestApplyValidates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "data", "train_00000"))
	writeShard(t, filepath.Join(dir, "data", "valid_00000"))
	manifest := `{"groups":[{"splits":{"train":{"megatron":"train_00000"},"valid":{"megatron":"valid_00000"}}}]}`
	if err := os.WriteFile(filepath.Join(dir, "data", dataprepManifest), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	body := defaultBody(cty.StringVal("data/train_00000"))
	body.extraAttrs = map[string]cty.Value{"eval_every": n(2)}
	resp, rec := applyStage(t, New(Options{Python: fakePython(t)}), request(dir, "pretrain", "ok", body.value(), "run-1"))
	if resp.Diagnostics.HasErrors() {
		t.Fatalf("diagnostics: %v", resp.Diagnostics)
	}
	var steps []int64
	for _, e := range rec.snapshot() {
		if e.Metric != nil && e.Metric.Name == "valid_loss" {
			steps = append(steps, e.Metric.Step)
		}
	}
	if diff := cmp.Diff([]int64{2, 4, 5}, steps); diff != "" {
		t.Errorf("validated steps (-want +got):\n%s", diff)
	}
	got := map[string]cty.Value{"valid_loss": resp.Outputs["valid_loss"], "valid_perplexity": resp.Outputs["valid_perplexity"]}
	want := map[string]cty.Value{"valid_loss": cty.NumberFloatVal(5.75), "valid_perplexity": cty.NumberFloatVal(314.191)}
	if diff := cmp.Diff(want, got, ctyCmp); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

func TestValidateValidationCounts(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		attrs map[string]cty.Value
		want  []string
	}{
		"whole numbers":    {attrs: map[string]cty.Value{"eval_every": n(25), "eval_batches": n(4)}},
		"a fraction":       {attrs: map[string]cty.Value{"eval_every": cty.NumberFloatVal(2.5)}, want: []string{"Invalid eval_every"}},
		"zero batches":     {attrs: map[string]cty.Value{"eval_batches": n(0)}, want: []string{"Invalid eval_batches"}},
		"negative cadence": {attrs: map[string]cty.Value{"eval_every": n(-1)}, want: []string{"Invalid eval_every"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := defaultBody(cty.StringVal("data/train_00000"))
			body.extraAttrs = tc.attrs
			if diff := cmp.Diff(tc.want, summaries(validate("pretrain", body.value()))); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

package train

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestExports runs stages whose trainer leaves exports half-done (the fake
// trainer writes tensors and a manifest, as trainer/hf does) and checks the
// folders gpuflow finishes: names, index, config.json, generation config,
// tokenizer files and adapter_config.json, against goldens.
func TestExports(t *testing.T) {
	t.Parallel()
	lora := cty.ObjectVal(map[string]cty.Value{"rank": n(8), "alpha": n(16), "dropout": cty.NumberFloatVal(0.05),
		"targets": cty.ListVal([]cty.Value{cty.StringVal("q"), cty.StringVal("v_proj")})})
	tests := map[string]struct {
		stage  string
		from   string
		export map[string]string
		lora   bool
		// activation is the model's; empty for swiglu.
		activation string
		golden     []string // files compared with testdata/export/NAME/FILE
		files      []string // every file the exported folder must hold
	}{
		"pretrain from a folder": {stage: "pretrain", from: "hfmodel", export: map[string]string{"hf": "out/hf"},
			golden: []string{"config.json", "generation_config.json", "model.safetensors.index.json"},
			files: []string{"config.json", "generation_config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
				"model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json"}},
		"pretrain from a preset": {stage: "pretrain", export: map[string]string{"hf": "out/hf"},
			golden: []string{"config.json", "generation_config.json"},
			files: []string{"config.json", "generation_config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
				"model.safetensors.index.json"}},
		"finetune adapters": {stage: "finetune", from: "hfmodel", export: map[string]string{"peft": "out/peft"}, lora: true,
			golden: []string{"adapter_config.json"}, files: []string{"adapter_config.json", "adapter_model.safetensors"}},
		// q and v of GPT-2 are one Conv1D, c_attn: one adapter of rank 2r.
		"pretrain a GPT-2 preset": {stage: "pretrain", export: map[string]string{"hf": "out/hf"}, activation: "gelu",
			golden: []string{"config.json", "generation_config.json"},
			files: []string{"config.json", "generation_config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
				"model.safetensors.index.json"}},
		"finetune GPT-2 adapters": {stage: "finetune", from: "gpt2model", export: map[string]string{"peft": "out/peft"}, lora: true,
			activation: "gelu", golden: []string{"adapter_config.json"}, files: []string{"adapter_config.json", "adapter_model.safetensors"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeShard(t, filepath.Join(dir, "data", "train-00000"))
			body := defaultBody(cty.StringVal("data/train-00000"))
			if tc.activation != "" {
				body.activation = tc.activation
			}
			if tc.from != "" {
				copyDir(t, filepath.Join("testdata", tc.from), filepath.Join(dir, tc.from))
				body.from = tc.from
			}
			if tc.lora {
				body.lora, body.base = lora, cty.StringVal(tc.from)
			}
			export := map[string]cty.Value{"hf": cty.NullVal(cty.String), "peft": cty.NullVal(cty.String), "tokenizer": cty.NullVal(cty.String)}
			for k, v := range tc.export {
				export[k] = cty.StringVal(v)
			}
			body.extraAttrs = map[string]cty.Value{"export": cty.ObjectVal(export)}
			resp, _ := applyStage(t, New(Options{Python: fakePython(t)}), request(dir, tc.stage, "ok", body.value(), "run-1"))
			for _, d := range resp.Diagnostics {
				if d.Severity == api.Error {
					t.Fatalf("apply: %s: %s", d.Summary, d.Detail)
				}
			}
			for kind, rel := range tc.export {
				out := filepath.Join(dir, rel)
				if got := resp.Outputs[kind]; got.AsString() != out {
					t.Errorf("outputs.%s = %s, want %s", kind, got.GoString(), out)
				}
				checkExport(t, out, dir, filepath.Join("testdata", "export", strings.ReplaceAll(strings.ReplaceAll(name, " ", "_"), "-", "")), tc.files, tc.golden)
			}
		})
	}
}

// checkExport compares the finished folder's files and goldens; the run's
// folder reads as $WORK in them.
func checkExport(t *testing.T, out, work, goldenDir string, files, golden []string) {
	t.Helper()
	if _, err := os.Stat(out + partialSuffix); err == nil {
		t.Errorf("%s%s is still there", out, partialSuffix)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for _, f := range golden {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), work, "$WORK")
		path := filepath.Join(goldenDir, f)
		if *update {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), text); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f, diff)
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPEFTTargets expands the trainer's short names to transformers' ones,
// and all-linear to the model's linear layers (GPT-2's MLP has no gate).
func TestPEFTTargets(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		activation string
		targets    []string
		want       []string
	}{
		"short and long names": {"swiglu", []string{"q", "v_proj", "down"}, []string{"down_proj", "q_proj", "v_proj"}},
		"all-linear, Llama": {"swiglu", []string{"all-linear"},
			[]string{"down_proj", "gate_proj", "k_proj", "o_proj", "q_proj", "up_proj", "v_proj"}},
		"all-linear, GPT-2": {"gelu", []string{"all-linear"}, []string{"down_proj", "k_proj", "o_proj", "q_proj", "up_proj", "v_proj"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := peftTargets(modelConfig{Activation: tc.activation}, tc.targets)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("peftTargets (-want +got):\n%s", diff)
			}
		})
	}
}

package hf

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/model"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// summary is what plan takes from a config.json.
type summary struct {
	Shape      model.Shape `json:"shape"`
	RopeType   string      `json:"rope_type"`
	Window     int         `json:"sliding_window"`
	QKVBias    bool        `json:"qkv_bias"`
	OutputBias bool        `json:"o_bias"`
	DType      string      `json:"dtype"`
	Tensors    int         `json:"tensors"`
}

// TestConfigGoldens reads the config.json of public models (copied from
// their model cards) and compares what plan takes from each with its
// golden.
func TestConfigGoldens(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "configs", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			c, err := ReadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(summary{Shape: c.Shape(), RopeType: c.RopeType(), Window: c.Window(),
				QKVBias: c.QKVBias(), OutputBias: c.OutputBias(), DType: c.DType(), Tensors: len(c.Tensors())}, "", "  ")
			golden := filepath.Join(dir, "plan.golden.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)+"\n"); diff != "" {
				t.Errorf("summary differs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFolders checks model folders whole (config.json and the safetensors
// headers); "" means the folder is good.
func TestFolders(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"single":            "",
		"sharded":           "",
		"absent_file":       "model.safetensors.index.json names model-00002-of-00002.safetensors, which is not in",
		"missing_tensor":    "no safetensors file holds model.layers.0.mlp.down_proj.weight",
		"shape_contradicts": "lm_head.weight in model.safetensors has shape [32, 8], but config.json implies [16, 8]",
		"tensor_dtype":      "is stored as F64; the trainer reads BF16, F16 and F32",
		"no_weights":        "has neither model.safetensors nor model.safetensors.index.json",
		"config_dtype":      `dtype "int8" is not supported`,
		"architecture":      "architecture GPTNeoXForCausalLM is not one gpuflow can train; it trains GPT2LMHeadModel, LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM",
		"gpt2":              "",
		"gpt2_conv1d":       "transformer.h.0.attn.c_attn.weight in model.safetensors has shape [24, 8], but config.json implies [8, 24]",
		"gpt2_activation":   `activation_function "relu" is not supported`,
		"gpt2_attention":    "scale_attn_by_inverse_layer_idx = true is not supported",
		"rope_type":         `rope type "yarn" is not supported`,
		"absent":            "has no config.json, so it is not a Hugging Face model folder",
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "folders", name)
			c, err := ReadConfig(dir)
			if err == nil {
				err = CheckWeights(dir, c)
			}
			switch {
			case want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Fatalf("error = %v, want one containing %q", err, want)
			}
		})
	}
}

// TestWindows reads the sliding window and the layers it applies to as
// transformers does: Qwen2 only with use_sliding_window, from
// max_window_layers (28 when absent) on unless layer_types names them.
func TestWindows(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		config         string
		window, layers int
	}{
		"mistral":                  {`{"architectures": ["MistralForCausalLM"], "sliding_window": 4096}`, 4096, 32},
		"mistral without a window": {`{"architectures": ["MistralForCausalLM"], "sliding_window": null}`, 0, 0},
		"qwen2 unused":             {`{"architectures": ["Qwen2ForCausalLM"], "sliding_window": 4096, "use_sliding_window": false}`, 0, 0},
		"qwen2 without the switch": {`{"architectures": ["Qwen2ForCausalLM"], "sliding_window": 4096}`, 0, 0},
		"qwen2 max_window_layers": {`{"architectures": ["Qwen2ForCausalLM"], "sliding_window": 4096, "use_sliding_window": true,
			"max_window_layers": 20}`, 4096, 12},
		"qwen2 default max_window_layers": {`{"architectures": ["Qwen2ForCausalLM"], "sliding_window": 4096, "use_sliding_window": true}`, 4096, 4},
		"qwen2 layer_types": {`{"architectures": ["Qwen2ForCausalLM"], "sliding_window": 4096, "use_sliding_window": true, "max_window_layers": 20,
			"layer_types": ["full_attention", "sliding_attention", "sliding_attention"]}`, 4096, 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var c Config
			if err := json.Unmarshal([]byte(tc.config), &c); err != nil {
				t.Fatal(err)
			}
			c.NumHiddenLayers = 32
			got := [2]int{c.Window(), c.WindowLayers()}
			if diff := cmp.Diff([2]int{tc.window, tc.layers}, got); diff != "" {
				t.Errorf("window and windowed layers (-want +got):\n%s", diff)
			}
		})
	}
}

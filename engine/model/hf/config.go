package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// ConfigFile is the name of a model folder's configuration.
const ConfigFile = "config.json"

// Architectures gpuflow's trainer reproduces, by their config.json name.
var Architectures = []string{gpt2, "LlamaForCausalLM", "MistralForCausalLM", qwen2}

// gpt2 is GPT-2's class: GELU, LayerNorm, learned positions, and
// config.json keys of its own (GPT2Config's n_embd, n_layer, ...).
const gpt2 = "GPT2LMHeadModel"

// qwen2 is Qwen2's class: biases on q, k and v but not o, and a sliding
// window only with use_sliding_window (counts.Windowing, which names it).
const qwen2 = counts.Qwen2Architecture

// gpt2Activations are GELU's tanh approximation under transformers'
// names, which GPT-2 was trained with and the trainer builds.
var gpt2Activations = []string{"gelu_new", "gelu_pytorch_tanh", "gelu_fast"}

// rope types the trainer computes: plain rotary and Llama 3.1's scaling.
var ropeTypes = []string{"default", "llama3"}

// dtypes the weights may be stored in, by config.json's name.
var dtypes = []string{"bfloat16", "float16", "float32"}

// Config is what gpuflow reads of config.json. Older files carry
// rope_theta and rope_scaling and torch_dtype; transformers 5 writes
// rope_parameters and dtype instead. Both are read.
type Config struct {
	Architectures         []string `json:"architectures"`
	HiddenSize            int      `json:"hidden_size"`
	IntermediateSize      int      `json:"intermediate_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	NumKeyValueHeads      int      `json:"num_key_value_heads"`
	HeadDim               int      `json:"head_dim"`
	VocabSize             int      `json:"vocab_size"`
	MaxPositionEmbeddings int      `json:"max_position_embeddings"`
	TieWordEmbeddings     *bool    `json:"tie_word_embeddings"`
	HiddenAct             string   `json:"hidden_act"`
	AttentionBias         bool     `json:"attention_bias"`
	MLPBias               bool     `json:"mlp_bias"`
	counts.Windowing
	TorchDtype     string    `json:"torch_dtype"`
	Dtype          string    `json:"dtype"`
	RopeScaling    *ropeSpec `json:"rope_scaling"`
	RopeParameters *ropeSpec `json:"rope_parameters"`
	gpt2Config
}

// gpt2Config is GPT2Config's names for the shape. A GPT-2 config.json
// has no hidden_size or intermediate_size; ReadConfig copies these into
// the common fields.
type gpt2Config struct {
	NEmbd              int     `json:"n_embd"`
	NLayer             int     `json:"n_layer"`
	NHead              int     `json:"n_head"`
	NPositions         int     `json:"n_positions"`
	NInner             *int    `json:"n_inner"`
	ActivationFunction *string `json:"activation_function"`
	// Attention variants the trainer's plain attention does not reproduce.
	ScaleAttnWeights           *bool `json:"scale_attn_weights"`
	ScaleAttnByInverseLayerIdx bool  `json:"scale_attn_by_inverse_layer_idx"`
	ReorderAndUpcastAttn       bool  `json:"reorder_and_upcast_attn"`
}

// ropeSpec is rope_scaling (or rope_parameters): its type under either
// key name.
type ropeSpec struct {
	RopeType string `json:"rope_type"`
	Type     string `json:"type"`
}

// ReadConfig reads and checks dir/config.json.
func ReadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, ConfigFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s, so it is not a Hugging Face model folder", dir, ConfigFile)
	}
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %v", path, err)
	}
	if c.GPT2() {
		c.fromGPT2()
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Architecture is the one class config.json names.
func (c *Config) Architecture() string {
	if len(c.Architectures) != 1 {
		return ""
	}
	return c.Architectures[0]
}

// GPT2 reports whether config.json describes a GPT-2.
func (c *Config) GPT2() bool {
	return c.Architecture() == gpt2
}

// fromGPT2 fills the common fields from GPT2Config's keys and defaults:
// n_inner null is 4 * n_embd, activation_function gelu_new, the
// embeddings tied.
func (c *Config) fromGPT2() {
	g := c.gpt2Config
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.MaxPositionEmbeddings = g.NEmbd, g.NLayer, g.NHead, g.NPositions
	c.IntermediateSize = 4 * g.NEmbd
	if g.NInner != nil {
		c.IntermediateSize = *g.NInner
	}
	c.HiddenAct = gpt2Activations[0]
	if g.ActivationFunction != nil {
		c.HiddenAct = *g.ActivationFunction
	}
}

// Tied reports whether the output projection is the token embedding:
// tie_word_embeddings, which defaults to true in GPT-2 and false else.
func (c *Config) Tied() bool {
	if c.TieWordEmbeddings == nil {
		return c.GPT2()
	}
	return *c.TieWordEmbeddings
}

// Activation is the language's name for the model's MLP.
func (c *Config) Activation() string {
	if c.GPT2() {
		return model.ActivationGELU
	}
	return model.ActivationSwiGLU
}

// DType is the weights' storage type, bfloat16 when not stated.
func (c *Config) DType() string {
	for _, d := range []string{c.Dtype, c.TorchDtype} {
		if d != "" {
			return d
		}
	}
	return "bfloat16"
}

// RopeType is the rotary variant, "default" for plain rotary.
func (c *Config) RopeType() string {
	for _, r := range []*ropeSpec{c.RopeScaling, c.RopeParameters} {
		if r == nil {
			continue
		}
		for _, t := range []string{r.RopeType, r.Type} {
			if t != "" {
				return t
			}
		}
	}
	return "default"
}

// KVHeads is num_key_value_heads, which defaults to the attention heads.
func (c *Config) KVHeads() int {
	if c.NumKeyValueHeads == 0 {
		return c.NumAttentionHeads
	}
	return c.NumKeyValueHeads
}

// HeadWidth is the width of one attention head.
func (c *Config) HeadWidth() int {
	if c.HeadDim != 0 {
		return c.HeadDim
	}
	if c.NumAttentionHeads == 0 {
		return 0
	}
	return c.HiddenSize / c.NumAttentionHeads
}

// Window is the sliding-window attention span in tokens, 0 for none.
func (c *Config) Window() int { return c.Windowing.Span(c.Architecture()) }

// WindowLayers is how many layers attend through the sliding window.
func (c *Config) WindowLayers() int { return c.Windowing.Layers(c.Architecture(), c.NumHiddenLayers) }

// QKVBias reports whether the q, k and v projections carry a bias:
// always in Qwen2 and GPT-2, with attention_bias in Llama and Mistral.
func (c *Config) QKVBias() bool {
	return c.Architecture() == qwen2 || c.GPT2() || c.AttentionBias
}

// OutputBias reports whether o_proj carries a bias: always in GPT-2, with
// Llama's attention_bias.
func (c *Config) OutputBias() bool {
	return c.GPT2() || (c.Architecture() != qwen2 && c.AttentionBias)
}

// Shape is the model's shape; its sequence length is the longest the model
// was made for (max_position_embeddings), which a workload usually lowers.
func (c *Config) Shape() model.Shape {
	return model.Shape{
		Layers: c.NumHiddenLayers, Hidden: c.HiddenSize, FFNHidden: c.IntermediateSize,
		Heads: c.NumAttentionHeads, KVHeads: c.KVHeads(), Vocab: c.VocabSize,
		SeqLen: c.MaxPositionEmbeddings, TiedEmbeddings: c.Tied(),
		Activation: c.Activation(), Architecture: c.Architecture(),
		Window: c.Window(), WindowLayers: c.WindowLayers(),
	}
}

// check refuses what the trainer cannot reproduce exactly.
func (c *Config) check() error {
	arch := c.Architecture()
	if arch == "" {
		return fmt.Errorf("architectures must name exactly one model class, not %q; gpuflow trains %s", c.Architectures, strings.Join(Architectures, ", "))
	}
	if !slices.Contains(Architectures, arch) {
		return fmt.Errorf("architecture %s is not one gpuflow can train; it trains %s", arch, strings.Join(Architectures, ", "))
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"layers", c.NumHiddenLayers}, {"hidden", c.HiddenSize}, {"ffn_hidden", c.IntermediateSize},
		{"heads", c.NumAttentionHeads}, {"vocab", c.VocabSize}, {"positions", c.MaxPositionEmbeddings}} {
		if f.v <= 0 {
			return fmt.Errorf("%s must be a positive whole number, not %d", c.Key(f.key), f.v)
		}
	}
	if err := c.checkActivation(); err != nil {
		return err
	}
	if err := c.checkGPT2Attention(); err != nil {
		return err
	}
	switch {
	case c.HeadWidth()*c.NumAttentionHeads != c.HiddenSize:
		return fmt.Errorf("head_dim %d times %s %d is not %s %d; gpuflow's trainer needs heads that split the hidden size",
			c.HeadWidth(), c.Key("heads"), c.NumAttentionHeads, c.Key("hidden"), c.HiddenSize)
	case c.MLPBias:
		return fmt.Errorf("mlp_bias = true is not supported; gpuflow's trainer has no bias on the feed-forward layers")
	case !slices.Contains(ropeTypes, c.RopeType()):
		return fmt.Errorf("rope type %q is not supported; gpuflow's trainer computes %s rotary positions", c.RopeType(), strings.Join(ropeTypes, " and "))
	case !slices.Contains(dtypes, c.DType()):
		return fmt.Errorf("dtype %q is not supported; the weights must be stored as %s", c.DType(), strings.Join(dtypes, ", "))
	}
	return nil
}

// keys are config.json's names for the shape, by the model argument or
// quantity they give, for Llama-style files and for GPT-2's.
var keys = map[string][2]string{
	"layers": {"num_hidden_layers", "n_layer"}, "hidden": {"hidden_size", "n_embd"},
	"ffn_hidden": {"intermediate_size", "n_inner"}, "heads": {"num_attention_heads", "n_head"},
	"kv_heads": {"num_key_value_heads", "n_head"}, "vocab": {"vocab_size", "vocab_size"},
	"positions": {"max_position_embeddings", "n_positions"}, "tied_embeddings": {"tie_word_embeddings", "tie_word_embeddings"},
	"activation": {"hidden_act", "activation_function"}, "sliding_window": {"sliding_window", "sliding_window"},
}

// Key is config.json's name for a model argument (layers, hidden, ...).
func (c *Config) Key(arg string) string {
	k := keys[arg]
	if c.GPT2() {
		return k[1]
	}
	return k[0]
}

// checkActivation refuses an MLP the trainer does not build: SwiGLU (silu)
// for the Llama family, GELU's tanh approximation for GPT-2.
func (c *Config) checkActivation() error {
	if c.GPT2() {
		if !slices.Contains(gpt2Activations, c.HiddenAct) {
			return fmt.Errorf("activation_function %q is not supported; gpuflow's trainer builds GPT-2 with GELU's tanh approximation (%s)", c.HiddenAct, strings.Join(gpt2Activations, ", "))
		}
		return nil
	}
	if c.HiddenAct != "silu" {
		return fmt.Errorf("hidden_act %q is not supported; gpuflow's trainer builds SwiGLU feed-forward layers (silu)", c.HiddenAct)
	}
	return nil
}

// checkGPT2Attention refuses what GPT2Config can ask of attention beyond
// scores scaled by 1/sqrt(head_dim), which is all the trainer computes
// (its models/gpt2 refuses the same when the run starts).
func (c *Config) checkGPT2Attention() error {
	if !c.GPT2() {
		return nil
	}
	g := c.gpt2Config
	switch {
	case g.ScaleAttnWeights != nil && !*g.ScaleAttnWeights:
		return fmt.Errorf("scale_attn_weights = false is not supported; gpuflow's trainer scales attention scores by 1/sqrt(head_dim), as GPT-2 does")
	case g.ScaleAttnByInverseLayerIdx:
		return fmt.Errorf("scale_attn_by_inverse_layer_idx = true is not supported; gpuflow's trainer scales every layer's attention scores by 1/sqrt(head_dim) alone")
	case g.ReorderAndUpcastAttn:
		return fmt.Errorf("reorder_and_upcast_attn = true is not supported; gpuflow's trainer computes GPT-2's plain attention")
	}
	return nil
}

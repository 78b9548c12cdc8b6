package model

import (
	"fmt"
	"sort"
)

// Shape is a decoder-only transformer's architecture.
type Shape struct {
	Layers         int    `json:"layers"`
	Hidden         int    `json:"hidden"`
	FFNHidden      int    `json:"ffn_hidden"`
	Heads          int    `json:"heads"`
	KVHeads        int    `json:"kv_heads"` // equal to Heads without grouped-query attention
	Vocab          int    `json:"vocab"`
	SeqLen         int    `json:"seq_len"`
	TiedEmbeddings bool   `json:"tied_embeddings"`
	Activation     string `json:"activation"` // ActivationSwiGLU or ActivationGELU
	// Window is the sliding-window attention span in tokens of a model
	// read from a folder (0 for none), WindowLayers how many of its layers
	// attend through it.
	Window       int `json:"sliding_window,omitempty"`
	WindowLayers int `json:"window_layers,omitempty"`
	// Architecture is the Hugging Face class of a model read from a folder
	// (LlamaForCausalLM, say); From is that folder as the workload names it.
	Architecture string `json:"architecture,omitempty"`
	From         string `json:"from,omitempty"`
}

// Activations a Shape may use.
const (
	ActivationSwiGLU = "swiglu"
	ActivationGELU   = "gelu"
)

// HeadDim is the width of one attention head.
func (s Shape) HeadDim() int {
	if s.Heads == 0 {
		return 0
	}
	return s.Hidden / s.Heads
}

// presets are published architectures. Sequence length is the length the
// model was pre-trained at, which a workload usually overrides.
var presets = map[string]Shape{
	// GPT-2 small (Radford et al. 2019).
	"gpt2-124m": {Layers: 12, Hidden: 768, FFNHidden: 3072, Heads: 12, KVHeads: 12, Vocab: 50257, SeqLen: 1024, TiedEmbeddings: true, Activation: ActivationGELU},
	// Llama 3.2 1B (Meta model card / config.json).
	"llama3.2-1b": {Layers: 16, Hidden: 2048, FFNHidden: 8192, Heads: 32, KVHeads: 8, Vocab: 128256, SeqLen: 8192, TiedEmbeddings: true, Activation: ActivationSwiGLU},
	// Llama 2 7B (Touvron et al. 2023).
	"llama2-7b": {Layers: 32, Hidden: 4096, FFNHidden: 11008, Heads: 32, KVHeads: 32, Vocab: 32000, SeqLen: 4096, Activation: ActivationSwiGLU},
	// Llama 3 8B (Meta config.json).
	"llama3-8b": {Layers: 32, Hidden: 4096, FFNHidden: 14336, Heads: 32, KVHeads: 8, Vocab: 128256, SeqLen: 8192, Activation: ActivationSwiGLU},
	// Qwen2 7B (Qwen config.json).
	"qwen2-7b": {Layers: 28, Hidden: 3584, FFNHidden: 18944, Heads: 28, KVHeads: 4, Vocab: 152064, SeqLen: 32768, Activation: ActivationSwiGLU},
	// Llama 2 70B.
	"llama2-70b": {Layers: 80, Hidden: 8192, FFNHidden: 28672, Heads: 64, KVHeads: 8, Vocab: 32000, SeqLen: 4096, Activation: ActivationSwiGLU},
	// Llama 3 70B.
	"llama3-70b": {Layers: 80, Hidden: 8192, FFNHidden: 28672, Heads: 64, KVHeads: 8, Vocab: 128256, SeqLen: 8192, Activation: ActivationSwiGLU},
	// Llama 3.1 405B.
	"llama3-405b": {Layers: 126, Hidden: 16384, FFNHidden: 53248, Heads: 128, KVHeads: 8, Vocab: 128256, SeqLen: 8192, Activation: ActivationSwiGLU},
}

// Preset returns the named built-in shape.
func Preset(name string) (Shape, error) {
	s, ok := presets[name]
	if !ok {
		return Shape{}, fmt.Errorf("no model preset %q", name)
	}
	return s, nil
}

// PresetNames lists the built-in presets in sorted order.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

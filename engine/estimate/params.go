package estimate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpuflow/gpuflow/engine/model"
)

// Counts are a model's parameters by where they live.
type Counts struct {
	// PerLayer is one transformer layer: attention (with GQA), MLP (three
	// matrices for SwiGLU, two for GELU) and norms.
	PerLayer float64
	// Embedding is the input token embedding, V*h.
	Embedding float64
	// Output is the untied output projection, V*h; zero when tied.
	Output float64
	// Extra is the final norm and, for GELU (GPT-style) models, learned
	// position embeddings.
	Extra float64
}

// Total is every parameter, a tied embedding counted once.
func (c Counts) Total(layers int) float64 {
	return c.PerLayer*float64(layers) + c.Embedding + c.Output + c.Extra
}

// Count counts a shape's parameters. SwiGLU models are counted the Llama
// way (no biases, RMSNorm); GELU models the GPT-2 way (biases, LayerNorm
// with bias, learned positions up to SeqLen).
func Count(s model.Shape) Counts {
	h := float64(s.Hidden)
	q := float64(s.Heads * s.HeadDim())
	kv := float64(s.KVHeads * s.HeadDim())
	ffn := float64(s.FFNHidden)
	attn := h*q + 2*h*kv + q*h
	c := Counts{Embedding: float64(s.Vocab) * h}
	if !s.TiedEmbeddings {
		c.Output = c.Embedding
	}
	if s.Activation == model.ActivationGELU {
		attnBias := q + 2*kv + h
		c.PerLayer = attn + attnBias + 2*h*ffn + ffn + h + 2*2*h
		c.Extra = 2*h + float64(s.SeqLen)*h
		return c
	}
	c.PerLayer = attn + 3*h*ffn + 2*h
	c.Extra = h
	return c
}

// LoRA describes low-rank adapters on a frozen model.
type LoRA struct {
	Rank int `json:"rank"`
	// Targets names the adapted linear layers: q, k, v, o, gate, up, down
	// (Hugging Face's q_proj ... down_proj are accepted), or "all-linear".
	Targets []string `json:"targets"`
}

// Key names the adapters for calibration run keys: "lora r16 o,q,v", the
// targets normalised and sorted; "" for nil (the whole model trains).
func (l *LoRA) Key() string {
	if l == nil {
		return ""
	}
	targets := make([]string, 0, len(l.Targets))
	for _, t := range l.Targets {
		if a, ok := loraAliases[t]; ok {
			t = a
		}
		targets = append(targets, t)
	}
	sort.Strings(targets)
	return fmt.Sprintf("lora r%d %s", l.Rank, strings.Join(targets, ","))
}

var loraAliases = map[string]string{
	"q_proj": "q", "k_proj": "k", "v_proj": "v", "o_proj": "o",
	"gate_proj": "gate", "up_proj": "up", "down_proj": "down",
}

// adapterParamsPerLayer counts one layer's adapter parameters: r*(in+out)
// per adapted matrix.
func adapterParamsPerLayer(s model.Shape, l LoRA) (float64, error) {
	if l.Rank < 1 {
		return 0, fmt.Errorf("LoRA rank is %d; it must be 1 or more", l.Rank)
	}
	h := float64(s.Hidden)
	q := float64(s.Heads * s.HeadDim())
	kv := float64(s.KVHeads * s.HeadDim())
	ffn := float64(s.FFNHidden)
	dims := map[string]float64{"q": h + q, "k": h + kv, "v": h + kv, "o": q + h, "up": h + ffn, "down": ffn + h}
	if s.Activation != model.ActivationGELU {
		dims["gate"] = h + ffn
	}
	seen := map[string]bool{}
	var sum float64
	for _, t := range expandTargets(l.Targets) {
		name := targetName(t)
		d, ok := dims[name]
		if !ok {
			return 0, fmt.Errorf("LoRA target %q is not a linear layer of this model; use q, k, v, o, up, down%s or all-linear", t, gateHint(s))
		}
		if !seen[name] {
			seen[name] = true
			sum += d
		}
	}
	if len(seen) == 0 {
		return 0, fmt.Errorf("LoRA has no targets; name the adapted layers (q, k, v, o, ...) or all-linear")
	}
	return float64(l.Rank) * sum, nil
}

// targetName is a LoRA target's short name: q, k, v, o, gate, up, down.
func targetName(t string) string {
	name := strings.ToLower(t)
	if a, ok := loraAliases[name]; ok {
		return a
	}
	return name
}

// adaptedMatrices is the set of a LoRA's targets by short name.
func adaptedMatrices(targets []string) map[string]bool {
	set := map[string]bool{}
	for _, t := range expandTargets(targets) {
		set[targetName(t)] = true
	}
	return set
}

func expandTargets(ts []string) []string {
	for _, t := range ts {
		if t == "all-linear" || t == "all_linear" {
			return []string{"q", "k", "v", "o", "gate", "up", "down"}
		}
	}
	return ts
}

func gateHint(s model.Shape) string {
	if s.Activation == model.ActivationGELU {
		return ""
	}
	return ", gate"
}

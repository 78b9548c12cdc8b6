package counts

// Shape is what the counts depend on of a model.
type Shape struct {
	Layers, Hidden, FFNHidden, Heads, KVHeads, Vocab, SeqLen int
	TiedEmbeddings                                           bool
	// GELU marks a GPT-style model (two MLP matrices, biases, LayerNorm,
	// learned positions); otherwise it is a Llama-style SwiGLU model.
	GELU bool
	// Window is a sliding window's span in tokens (a token and the
	// Window-1 before it), 0 for none; WindowLayers how many layers
	// attend through it, the others over the whole sequence.
	Window, WindowLayers int
}

// HeadDim is the width of one attention head.
func (s Shape) HeadDim() int {
	if s.Heads == 0 {
		return 0
	}
	return s.Hidden / s.Heads
}

// Params are a model's parameters by where they live.
type Params struct {
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
func (c Params) Total(layers int) float64 {
	return c.PerLayer*float64(layers) + c.Embedding + c.Output + c.Extra
}

// Count counts a shape's parameters. SwiGLU models are counted the Llama
// way (no biases, RMSNorm); GELU models the GPT-2 way (biases, LayerNorm
// with bias, learned positions up to SeqLen).
func Count(s Shape) Params {
	h := float64(s.Hidden)
	q := float64(s.Heads * s.HeadDim())
	kv := float64(s.KVHeads * s.HeadDim())
	ffn := float64(s.FFNHidden)
	attn := h*q + 2*h*kv + q*h
	c := Params{Embedding: float64(s.Vocab) * h}
	if !s.TiedEmbeddings {
		c.Output = c.Embedding
	}
	if s.GELU {
		attnBias := q + 2*kv + h
		c.PerLayer = attn + attnBias + 2*h*ffn + ffn + h + 2*2*h
		c.Extra = 2*h + s.Positions()
		return c
	}
	c.PerLayer = attn + 3*h*ffn + 2*h
	c.Extra = h
	return c
}

// Positions is a GELU (GPT-style) model's learned position embeddings,
// one row of hidden per position up to SeqLen; zero for rotary models.
func (s Shape) Positions() float64 {
	if !s.GELU {
		return 0
	}
	return float64(s.SeqLen) * float64(s.Hidden)
}

// AttentionFLOPs is the attention core's work per token (QK^T and AV,
// forward and backward), 12*L*q*s: the full s*s square, not the causal
// half, as MFU is conventionally quoted. A layer with a sliding window
// shorter than the sequence counts the window instead of s: its keys per
// query, as the square counts s.
func AttentionFLOPs(s Shape) float64 {
	return 12 * float64(s.Heads*s.HeadDim()) * float64(s.AttendedKeys())
}

// AttendedKeys is the keys a query reads summed over the layers, in the
// convention of AttentionFLOPs: s per layer, the window where a sliding
// window is shorter.
func (s Shape) AttendedKeys() int {
	if s.Window <= 0 || s.Window >= s.SeqLen {
		return s.Layers * s.SeqLen
	}
	windowed := min(s.WindowLayers, s.Layers)
	return (s.Layers-windowed)*s.SeqLen + windowed*s.Window
}

// ModelFLOPs is the work per token MFU is quoted in: 6N plus attention,
// or with LoRA adapters 4N + 6*N_adapter plus attention (frozen weights
// need no weight gradients). params is the whole model, adapters LoRA's
// (0 for none).
func ModelFLOPs(params, adapters, attention float64) float64 {
	if adapters > 0 {
		return 4*params + 6*adapters + attention
	}
	return 6*params + attention
}

package counts

// Qwen2Architecture is Qwen2's class as config.json names it, whose
// window Windowing reads apart from the others'; engine/model/hf names
// the class by it too.
const Qwen2Architecture = "Qwen2ForCausalLM"

// qwen2MaxWindowLayers is transformers' max_window_layers for a Qwen2
// config.json without one.
const qwen2MaxWindowLayers = 28

// Windowing is what a Hugging Face config.json says of sliding-window
// attention; its methods read it as transformers does.
type Windowing struct {
	SlidingWindow    *int     `json:"sliding_window"`
	UseSlidingWindow *bool    `json:"use_sliding_window"`
	MaxWindowLayers  *int     `json:"max_window_layers"`
	LayerTypes       []string `json:"layer_types"`
}

// Span is the window in tokens, 0 for none. Qwen2 configs carry a window
// they do not use unless use_sliding_window (false when absent).
func (w Windowing) Span(architecture string) int {
	if w.SlidingWindow == nil {
		return 0
	}
	used := w.UseSlidingWindow == nil || *w.UseSlidingWindow
	if architecture == Qwen2Architecture {
		used = w.UseSlidingWindow != nil && *w.UseSlidingWindow
	}
	if !used {
		return 0
	}
	return *w.SlidingWindow
}

// Layers is how many of a model's layers attend through the window:
// every layer of Mistral; in Qwen2 those layer_types marks
// "sliding_attention", or without layer_types those from
// max_window_layers on.
func (w Windowing) Layers(architecture string, layers int) int {
	if w.Span(architecture) == 0 {
		return 0
	}
	if architecture != Qwen2Architecture {
		return layers
	}
	if len(w.LayerTypes) > 0 {
		n := 0
		for _, t := range w.LayerTypes {
			if t == "sliding_attention" {
				n++
			}
		}
		return n
	}
	first := qwen2MaxWindowLayers
	if w.MaxWindowLayers != nil {
		first = *w.MaxWindowLayers
	}
	return max(0, layers-first)
}

package counts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// llama32 is Llama-3.2-1B's shape, 1,235,814,400 parameters by its
// config.json.
var llama32 = Shape{Layers: 16, Hidden: 2048, FFNHidden: 8192, Heads: 32, KVHeads: 8, Vocab: 128256, SeqLen: 4096, TiedEmbeddings: true}

func TestCounts(t *testing.T) {
	t.Parallel()
	params := Count(llama32).Total(llama32.Layers)
	attention := AttentionFLOPs(llama32)
	all, err := AdaptersPerLayer(llama32, 16, []string{"all-linear"})
	if err != nil {
		t.Fatal(err)
	}
	qv, err := AdaptersPerLayer(llama32, 16, []string{"q_proj", "v", "Q"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{"params": params, "attention": attention, "all-linear per layer": all, "q and v per layer": qv,
		"model FLOPs": ModelFLOPs(params, 0, attention), "model FLOPs with adapters": ModelFLOPs(params, 16*all, attention)}
	want := map[string]float64{"params": 1_235_814_400, "attention": 12 * 16 * 2048 * 4096,
		// q 2048+2048, k and v 2048+512 each, o 2048+2048, gate, up and down 2048+8192 each.
		"all-linear per layer": 16 * (4096 + 2*2560 + 4096 + 3*10240), "q and v per layer": 16 * (4096 + 2560),
		"model FLOPs": 6*1_235_814_400 + 12*16*2048*4096, "model FLOPs with adapters": 4*1_235_814_400 + 6*16*16*(4096+2*2560+4096+3*10240) + 12*16*2048*4096}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// TestAttentionFLOPsCountTheWindow: a sliding window shorter than the
// sequence counts its span instead of the sequence in the layers it
// applies to; one at least as long changes nothing.
func TestAttentionFLOPsCountTheWindow(t *testing.T) {
	t.Parallel()
	mistral := Shape{Layers: 32, Hidden: 4096, FFNHidden: 14336, Heads: 32, KVHeads: 8, Vocab: 32000, SeqLen: 8192}
	with := func(s Shape, window, layers int) Shape {
		s.Window, s.WindowLayers = window, layers
		return s
	}
	got := map[string]float64{}
	for name, s := range map[string]Shape{
		"no window":                    mistral,
		"every layer, 4096 of 8192":    with(mistral, 4096, 32),
		"layers 28-31, 4096 of 8192":   with(mistral, 4096, 4),
		"a window as long as the seq":  with(mistral, 8192, 32),
		"a window longer than the seq": with(mistral, 32768, 32),
	} {
		got[name] = AttentionFLOPs(s)
	}
	full := 12.0 * 4096 * 32 * 8192
	want := map[string]float64{
		"no window":                    full,
		"every layer, 4096 of 8192":    full / 2,
		"layers 28-31, 4096 of 8192":   12 * 4096 * (28*8192 + 4*4096),
		"a window as long as the seq":  full,
		"a window longer than the seq": full,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attention FLOPs (-want +got):\n%s", diff)
	}
}

// gpt2 is GPT-2's smallest shape, 124,439,808 parameters as
// transformers' GPT2LMHeadModel builds it (the output tied).
var gpt2 = Shape{Layers: 12, Hidden: 768, FFNHidden: 3072, Heads: 12, KVHeads: 12, Vocab: 50257, SeqLen: 1024, TiedEmbeddings: true, GELU: true}

func TestGPT2Counts(t *testing.T) {
	t.Parallel()
	all, err := AdaptersPerLayer(gpt2, 8, []string{"all-linear"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{"params": Count(gpt2).Total(gpt2.Layers), "all-linear per layer": all}
	// q, k, v and o 768+768 each, up and down 768+3072 each: no gate.
	want := map[string]float64{"params": 124_439_808, "all-linear per layer": 8 * (4*1536 + 2*3840)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestAdaptersPerLayerRefuses(t *testing.T) {
	t.Parallel()
	gpt := gpt2
	for name, tc := range map[string]struct {
		shape   Shape
		rank    int
		targets []string
		want    string
	}{
		"rank 0":        {llama32, 0, []string{"q"}, "LoRA rank is 0; it must be 1 or more"},
		"no targets":    {llama32, 8, nil, "LoRA has no targets; name the adapted layers (q, k, v, o, ...) or all-linear"},
		"a GELU's gate": {gpt, 8, []string{"gate"}, `LoRA target "gate" is not a linear layer of this model; use q, k, v, o, up, down or all-linear`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := AdaptersPerLayer(tc.shape, tc.rank, tc.targets)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

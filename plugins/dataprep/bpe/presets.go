package bpe

import "fmt"

// preset is what a tiktoken rank file does not say about itself: its
// pre-tokenizer pattern, its special tokens and which of them begin and end
// a document.
type preset struct {
	name     string
	ranks    int
	pattern  Pattern
	specials map[string]uint32
	bos, eos string
}

// presets are the published tiktoken vocabularies, recognised by their rank
// count when the configuration names none.
var presets = []preset{
	{name: "r50k_base", ranks: 50256, pattern: PatternGPT2,
		specials: map[string]uint32{"<|endoftext|>": 50256}, eos: "<|endoftext|>"},
	{name: "cl100k_base", ranks: 100256, pattern: PatternCL100K,
		specials: map[string]uint32{
			"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
			"<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
		}, eos: "<|endoftext|>"},
	{name: "o200k_base", ranks: 199998, pattern: PatternO200K,
		specials: map[string]uint32{"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
		eos:      "<|endoftext|>"},
	{name: "llama3", ranks: 128000, pattern: PatternCL100K,
		specials: llama3Specials(), bos: "<|begin_of_text|>", eos: "<|end_of_text|>"},
}

// llama3Specials are the 256 special tokens Meta's Llama 3 tokenizer appends
// after its 128000 ranks.
func llama3Specials() map[string]uint32 {
	named := []string{
		"<|begin_of_text|>", "<|end_of_text|>",
		"<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
		"<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
		"<|start_header_id|>", "<|end_header_id|>",
		"<|reserved_special_token_4|>", "<|eot_id|>",
	}
	m := make(map[string]uint32, 256)
	for k, name := range named {
		m[name] = uint32(128000 + k)
	}
	for k := 5; k < 251; k++ {
		m[fmt.Sprintf("<|reserved_special_token_%d|>", k)] = uint32(128000 + len(named) + k - 5)
	}
	return m
}

func presetByName(name string) (preset, bool) {
	for _, p := range presets {
		if p.name == name {
			return p, true
		}
	}
	return preset{}, false
}

func presetByRanks(n int) (preset, bool) {
	for _, p := range presets {
		if p.ranks == n {
			return p, true
		}
	}
	return preset{}, false
}

// PresetNames lists the tiktoken vocabularies ReadTiktoken knows by name.
func PresetNames() []string {
	names := make([]string, len(presets))
	for k, p := range presets {
		names[k] = p.name
	}
	return names
}

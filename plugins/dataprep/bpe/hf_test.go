package bpe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// byteLevelFile is a byte-level tokenizer.json of the 256 byte tokens, two
// merges and three special tokens, with Qwen2's normalizer and split and
// Llama 3.1's Sequence post-processor.
func byteLevelFile(t *testing.T) []byte {
	t.Helper()
	vocab := make(map[string]uint32)
	for b := range 256 {
		vocab[string(byteLevelRunes[b])] = uint32(b)
	}
	eAcute := string(byteLevelRunes[0xC3]) + string(byteLevelRunes[0xA9])
	vocab[eAcute] = 256
	vocab["ab"] = 257
	file := map[string]any{
		"added_tokens": []map[string]any{
			{"id": 300, "content": "<|begin_of_text|>", "special": true},
			{"id": 301, "content": "<|end_of_text|>", "special": true},
			{"id": 302, "content": "<|eot_id|>", "special": true},
		},
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []map[string]any{
			{"type": "Split", "pattern": map[string]any{"Regex": PatternQwen2.Regex()}, "behavior": "Isolated", "invert": false},
			{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "Sequence", "processors": []map[string]any{
			{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
			{"type": "TemplateProcessing", "single": []map[string]any{
				{"SpecialToken": map[string]any{"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": map[string]any{"id": "A", "type_id": 0}},
			}},
		}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{
			string(byteLevelRunes[0xC3]) + " " + string(byteLevelRunes[0xA9]), "a b",
		}},
	}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestByteLevelNormalized checks NFC before splitting (a decomposed é
// becomes the one token of the composed one), Qwen2's single digits, and
// the BOS inside a Sequence post-processor; tokenizer_config.json beside a
// file named tokenizer.json gives the EOS.
func TestByteLevelNormalized(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(path, byteLevelFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	config := `{"bos_token": "<|begin_of_text|>", "eos_token": {"content": "<|eot_id|>", "lstrip": false}}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := Open(path, KindHF, "")
	if err != nil {
		t.Fatal(err)
	}
	got := tok.NewEncoder().Encode(nil, "e\u0301ab 12")
	want := []uint32{256, 257, ' ', '1', '2'}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if tok.DefaultBOS() != "<|begin_of_text|>" || tok.DefaultEOS() != "<|eot_id|>" {
		t.Errorf("BOS, EOS = %q, %q; want <|begin_of_text|> from the post-processor, <|eot_id|> from tokenizer_config.json", tok.DefaultBOS(), tok.DefaultEOS())
	}
}

// TestConfigOnlyBesideTokenizerJSON: a vocabulary under another name is
// read alone, so a tokenizer_config.json of another vocabulary in the same
// folder cannot change it.
func TestConfigOnlyBesideTokenizerJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "other.json")
	if err := os.WriteFile(path, byteLevelFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"eos_token": "<|eot_id|>"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := Open(path, KindHF, "")
	if err != nil {
		t.Fatal(err)
	}
	if tok.DefaultEOS() != "" {
		t.Errorf("EOS = %q, want none", tok.DefaultEOS())
	}
}

// TestClassesNewerThanGo: runes Unicode assigned after Go's tables are
// classed as Hugging Face tokenizers classes them.
func TestClassesNewerThanGo(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		r    rune
		want uint16
	}{
		"CJK Extension I (15.1)": {r: 0x2EBF0, want: classLetter | classUpperish | classLowerish},
		"Latin a":                {r: 'a', want: classLetter | classLowerish},
		"line feed":              {r: '\n', want: classSpace | classLineBreak},
		"ideographic space":      {r: 0x3000, want: classSpace},
		"unassigned":             {r: 0x10FFFD, want: classOther},
	}
	for name, tc := range tests {
		if got := computeClass(tc.r); got != tc.want {
			t.Errorf("%s: class of U+%04X = %06b, want %06b", name, tc.r, got, tc.want)
		}
	}
}

// TestDeepSeekV3File reads DeepSeek-V3's kind of file: its three Splits in
// a row, an empty normalizer Sequence, and special tokens the vocabulary
// also lists under their own (not byte-level) text. Numbers go in threes
// and a CJK run stands apart from the letters before it.
func TestDeepSeekV3File(t *testing.T) {
	t.Parallel()
	var file map[string]any
	if err := json.Unmarshal(byteLevelFile(t), &file); err != nil {
		t.Fatal(err)
	}
	splits := []map[string]any{}
	for _, re := range deepSeekV3Regexes {
		splits = append(splits, map[string]any{"type": "Split", "pattern": map[string]any{"Regex": re}, "behavior": "Isolated", "invert": false})
	}
	file["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": append(splits,
		map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false})}
	file["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{}}
	file["added_tokens"] = append(file["added_tokens"].([]any), map[string]any{"id": 303, "content": "<｜end▁of▁sentence｜>", "special": true})
	file["model"].(map[string]any)["vocab"].(map[string]any)["<｜end▁of▁sentence｜>"] = 303
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := Open(path, KindHF, "")
	if err != nil {
		t.Fatal(err)
	}
	if tok.Pattern() != PatternDeepSeekV3 {
		t.Errorf("pattern %v, want %v", tok.Pattern(), PatternDeepSeekV3)
	}
	var pieces []string
	tok.Pattern().Split("ab12345中文", func(p string) { pieces = append(pieces, p) })
	if diff := cmp.Diff([]string{"ab", "123", "45", "中文"}, pieces); diff != "" {
		t.Errorf("pieces (-want +got):\n%s", diff)
	}
	if id, ok := tok.SpecialID("<｜end▁of▁sentence｜>"); !ok || id != 303 {
		t.Errorf("special <｜end▁of▁sentence｜> = %d, %v; want 303", id, ok)
	}
}

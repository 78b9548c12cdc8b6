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
		want uint8
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

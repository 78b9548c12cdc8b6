package chat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
)

// sentencePieceFile writes a small SentencePiece-style tokenizer.json: a
// Prepend normalizer, so its tokens do not spell the text byte for byte.
func sentencePieceFile(t *testing.T) string {
	t.Helper()
	vocab := map[string]uint32{"<unk>": 0, "<s>": 1, "</s>": 2}
	for b := range 256 {
		vocab[fmt.Sprintf("<0x%02X>", b)] = uint32(3 + b)
	}
	for k, tok := range []string{"▁", "h", "e", "l", "o", "w", "r", "d", "▁h", "ll", "▁he", "▁hell", "▁hello", "▁w", "or", "▁wor", "▁world", "▁▁"} {
		vocab[tok] = uint32(259 + k)
	}
	file := map[string]any{
		"added_tokens": []map[string]any{
			{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true},
			{"id": 2, "content": "</s>", "special": true},
		},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []map[string]any{
			{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}},
		"model": map[string]any{
			"type": "BPE", "vocab": vocab, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
			"merges": []string{"▁ h", "l l", "▁h e", "▁he ll", "▁hell o", "▁ w", "o r", "▁w or", "▁ ▁"},
		},
	}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMaskSentencePiece(t *testing.T) {
	tok, err := bpe.Open(sentencePieceFile(t), bpe.KindHF, "")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Compile(`{{ bos_token }}{% for m in messages %} {{ m.content }}{% if m.role == "assistant" %}{{ eos_token }}{% endif %}{% endfor %}`, "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte(`{"conversations":[{"from":"human","value":"hello"},{"from":"gpt","value":"world"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	spans, err := tmpl.Spans(c, TrainAssistant)
	if err != nil {
		t.Fatal(err)
	}
	enc := tok.NewEncoder()
	ids, mask := Encode(enc, spans, nil, nil)
	full, err := tmpl.Render(c, len(c.Messages), false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(enc.EncodeSpecial(nil, full), ids); diff != "" {
		t.Errorf("span-wise ids differ from the whole render's (-whole +spans):\n%s", diff)
	}
	// <s> ▁ ▁hello | ▁wor l d </s>
	want := []uint8{0, 0, 0, 1, 1, 1, 1}
	if diff := cmp.Diff(want, mask); diff != "" {
		t.Errorf("ids %v, mask (-want +got):\n%s", ids, diff)
	}
}

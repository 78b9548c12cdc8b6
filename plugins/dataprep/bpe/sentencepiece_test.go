package bpe

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// spFile builds a small SentencePiece-style tokenizer.json: Llama 2's
// normalizer (prepend "▁", spaces as "▁"), byte fallback, and a few merges.
func spFile(t *testing.T, edit func(map[string]any)) string {
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
		"pre_tokenizer": nil,
		"post_processor": map[string]any{"type": "TemplateProcessing", "single": []map[string]any{
			{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}}, {"Sequence": map[string]any{"id": "A", "type_id": 0}},
		}},
		"model": map[string]any{
			"type": "BPE", "vocab": vocab, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
			"merges": []string{"▁ h", "l l", "▁h e", "▁he ll", "▁hell o", "▁ w", "o r", "▁w or", "▁ ▁"},
		},
	}
	if edit != nil {
		edit(file)
	}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSentencePieceEncode(t *testing.T) {
	t.Parallel()
	noFallback := func(f map[string]any) { f["model"].(map[string]any)["byte_fallback"] = false }
	metaspace := func(f map[string]any) {
		f["normalizer"] = nil
		f["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
	}
	tests := map[string]struct {
		edit    func(map[string]any)
		text    string
		special bool
		want    []uint32
	}{
		// "▁hello▁world": no merge makes "▁worl", so "▁world" stays
		// "▁wor" + "l" + "d"; of "▁▁w", "▁ w" ranks before "▁ ▁".
		"words":            {text: "hello world", want: []uint32{271, 274, 262, 266}},
		"two spaces":       {text: "hello  world", want: []uint32{271, 259, 274, 262, 266}},
		"byte fallback":    {text: "hé", want: []uint32{267, 3 + 0xC3, 3 + 0xA9}},
		"unknown fused":    {edit: noFallback, text: "héé", want: []uint32{267, 0}},
		"special as text":  {text: "<s>", want: []uint32{259, 3 + '<', 3 + 's', 3 + '>'}},
		"special matched":  {text: "he<s>he", special: true, want: []uint32{269, 1, 269}},
		"metaspace first":  {edit: metaspace, text: "he<s> he", special: true, want: []uint32{269, 1, 269}},
		"metaspace no pre": {edit: metaspace, text: "he<s>he", special: true, want: []uint32{269, 1, 260, 261}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tok, err := ReadHF(strings.NewReader(spFile(t, tc.edit)))
			if err != nil {
				t.Fatal(err)
			}
			enc := tok.NewEncoder()
			var got []uint32
			if tc.special {
				got = enc.EncodeSpecial(nil, tc.text)
			} else {
				got = enc.Encode(nil, tc.text)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if tok.DefaultBOS() != "<s>" {
				t.Errorf("BOS = %q, want <s> from the post-processor", tok.DefaultBOS())
			}
		})
	}
}

func TestWordsApart(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		tokens []string
		want   bool
	}{
		"words":          {tokens: []string{"▁", "▁a", "▁▁", "ab"}, want: true},
		"no ▁ token":     {tokens: []string{"▁a"}, want: false},
		"rune before ▁":  {tokens: []string{"▁", "a▁"}, want: false},
		"▁ inside word":  {tokens: []string{"▁", "▁a▁b"}, want: false},
		"▁ run in token": {tokens: []string{"▁", "▁▁▁x"}, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := make(map[string]uint32)
			for k, s := range tc.tokens {
				m[s] = uint32(k)
			}
			if got := wordsApart(m); got != tc.want {
				t.Errorf("wordsApart(%q) = %v, want %v", tc.tokens, got, tc.want)
			}
		})
	}
}

func TestNextMetaspaceWord(t *testing.T) {
	t.Parallel()
	var pieces []string
	s := "▁a▁▁b▁c▁▁"
	for i := 0; i < len(s); {
		j := nextMetaspaceWord(s, i)
		pieces = append(pieces, s[i:j])
		i = j
	}
	if diff := cmp.Diff([]string{"▁a", "▁▁b", "▁c", "▁▁"}, pieces); diff != "" {
		t.Errorf("pieces (-want +got):\n%s", diff)
	}
}

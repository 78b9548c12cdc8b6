package bpe

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// byteRanks is a rank file holding just the 256 single bytes.
func byteRanks() string {
	var b strings.Builder
	for k := range 256 {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(k)}), k)
	}
	return b.String()
}

func TestReadTiktokenErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		file, encoding, wantErr string
	}{
		"empty":            {file: "", encoding: "cl100k_base", wantErr: "holds no tokens"},
		"no rank":          {file: "IQ==\n", encoding: "cl100k_base", wantErr: "line 1: want"},
		"bad base64":       {file: "!!! 0\n", encoding: "cl100k_base", wantErr: "line 1: token is not base64"},
		"bad rank":         {file: "IQ== x\n", encoding: "cl100k_base", wantErr: `line 1: rank "x" is not a number`},
		"duplicate rank":   {file: "IQ== 0\nIg== 0\n", encoding: "cl100k_base", wantErr: "line 2: rank 0 already given on line 1"},
		"unknown encoding": {file: byteRanks(), encoding: "nope", wantErr: `unknown tiktoken encoding "nope"`},
		"unknown size":     {file: byteRanks(), encoding: "", wantErr: "a rank file of 256 tokens matches no known encoding"},
		"missing bytes":    {file: "IQ== 0\n", encoding: "cl100k_base", wantErr: "lacks a token for byte 0x00"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadTiktoken(strings.NewReader(tc.file), tc.encoding)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadHFErrors(t *testing.T) {
	t.Parallel()
	const byteLevel = `{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}`
	tests := map[string]struct {
		json, wantErr string
	}{
		"not json":   {json: `{`, wantErr: "unexpected EOF"},
		"wordpiece":  {json: `{"pre_tokenizer":` + byteLevel + `,"model":{"type":"WordPiece"}}`, wantErr: `model type "WordPiece" is not supported`},
		"normalizer": {json: `{"normalizer":{"type":"Lowercase"},"pre_tokenizer":` + byteLevel + `,"model":{"type":"BPE"}}`, wantErr: "normalizer: Lowercase is not supported by byte-level BPE"},
		"prepend on byte-level": {json: `{"normalizer":{"type":"Prepend","prepend":"_"},"pre_tokenizer":` + byteLevel + `,"model":{"type":"BPE"}}`,
			wantErr: "normalizer: Prepend is not supported by byte-level BPE"},
		"replace of a regex": {json: `{"normalizer":{"type":"Replace","pattern":{"Regex":" +"},"content":"_"},"model":{"type":"BPE"}}`,
			wantErr: "normalizer: Replace of a Regex is not supported; NFC, Prepend and Replace of a String"},
		"no unk, no fallback": {json: `{"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`, wantErr: "needs an unk_token"},
		"fallback bytes missing, no unk": {json: `{"model":{"type":"BPE","vocab":{"a":0},"merges":[],"byte_fallback":true}}`,
			wantErr: "without all 256 <0xXX> tokens, needs an unk_token"},
		"metaspace replacement": {json: `{"pre_tokenizer":{"type":"Metaspace","replacement":"_"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`,
			wantErr: `Metaspace replacement "_" is not supported`},
		"whitespace pre-tokenizer": {json: `{"pre_tokenizer":{"type":"Whitespace"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`,
			wantErr: "only Metaspace (or none) is supported without a ByteLevel step, got Whitespace"},
		"bert post-processor": {json: `{"post_processor":{"type":"BertProcessing"},"model":{"type":"BPE","vocab":{"a":0},"merges":[],"unk_token":"a"}}`,
			wantErr: "post-processor BertProcessing is not supported"},
		"two leading specials": {json: `{"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"a"}},{"SpecialToken":{"id":"a"}},{"Sequence":{"id":"A"}}]},"model":{"type":"BPE","vocab":{"a":0},"merges":[],"unk_token":"a"}}`,
			wantErr: "only [special] $A [special] is supported"},
		"normalized added token": {json: `{"added_tokens":[{"id":0,"content":"a","normalized":true}],"model":{"type":"BPE","vocab":{"a":0},"merges":[],"unk_token":"a"}}`,
			wantErr: "normalized: true"},
		"prefix space": {json: `{"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true,"use_regex":true},"model":{"type":"BPE"}}`,
			wantErr: "only ByteLevel (use_regex, no prefix space)"},
		"unknown regex": {json: `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated"},{"type":"ByteLevel"}]},"model":{"type":"BPE"}}`,
			wantErr: "is not one of the known patterns"},
		"lstrip": {json: `{"added_tokens":[{"id":1,"content":"<x>","lstrip":true}],"pre_tokenizer":` + byteLevel + `,"model":{"type":"BPE"}}`,
			wantErr: `added token "<x>": single_word, lstrip and rstrip are not supported`},
		"merge of unknown token": {json: `{"pre_tokenizer":` + byteLevel + `,"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}}`,
			wantErr: "merge 0 (\"a\" \"b\") names a token missing"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadHF(strings.NewReader(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// Package bpe is a BPE tokenizer that encodes exactly as the reference
// implementations do: tiktoken for rank files (r50k_base, cl100k_base,
// o200k_base, Llama 3's tokenizer.model) and Hugging Face tokenizers for
// tokenizer.json files holding a byte-level BPE model (GPT-2, Llama 3,
// Qwen2, with an NFC normalizer where given) or a SentencePiece-style one
// (Llama 2, Gemma: "▁" for spaces, merges over characters, byte
// fallback).
//
// Encoding is pre-tokenization, then BPE merges per piece. The reference
// pre-tokenizers are regular expressions with lookahead, which Go's regexp
// lacks. This package does not use a backtracking regex engine at run time:
// each known pattern has a hand-written scanner (pretokenize.go) that
// reproduces the regex's leftmost-first match, backtracking included, rune
// class by rune class. That is several times faster than a general
// backtracking engine (data preparation is bound by this step), and it is
// proven equal to the regex by tests and a fuzz test against
// github.com/dlclark/regexp2, and to the reference tokenizers by golden
// encodings of a mixed corpus (testdata/golden). Unknown patterns are
// refused rather than approximated.
//
// Merging follows the references: the adjacent pair with the lowest rank is
// joined first, the leftmost on ties; a piece that is itself a token is
// emitted whole where the reference does so (tiktoken always, Hugging Face
// with ignore_merges).
//
// \s is Unicode White_Space, as in the Rust regex engines of tiktoken and
// Hugging Face tokenizers (so U+0085 is a space and U+FEFF is not, unlike in
// JavaScript regexes). Rune classes are Hugging Face tokenizers' own
// (unicode_tables.go, generated from its regex engine), not Go's unicode
// tables, which follow an older Unicode version: a rune assigned since
// (CJK Extension I, for one) is a letter there and so here.
//
// It is not a trainer, and it does not read SentencePiece model files,
// WordPiece or Unigram models, or normalizers other than NFC, Prepend and
// Replace of a string.
package bpe

package bpe

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// hfFile is the part of a Hugging Face tokenizer.json this package reads.
type hfFile struct {
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  *hfPreTokenizer `json:"pre_tokenizer"`
	PostProcessor *hfPostProcess  `json:"post_processor"`
	Model         hfModel         `json:"model"`
}

type hfAddedToken struct {
	ID         uint32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
}

type hfPreTokenizer struct {
	Type           string            `json:"type"`
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       bool              `json:"use_regex"`
	Pretokenizers  []*hfPreTokenizer `json:"pretokenizers"`
	Pattern        struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
}

type hfPostProcess struct {
	Type   string `json:"type"`
	Single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
	} `json:"single"`
}

type hfModel struct {
	Type                    string            `json:"type"`
	Vocab                   map[string]uint32 `json:"vocab"`
	Merges                  json.RawMessage   `json:"merges"`
	IgnoreMerges            bool              `json:"ignore_merges"`
	Dropout                 *float64          `json:"dropout"`
	ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	ByteFallback            bool              `json:"byte_fallback"`
}

// ReadHF reads a Hugging Face tokenizer.json holding a byte-level BPE model:
// a BPE model whose pre-tokenizer is ByteLevel, alone or after a Split on
// one of the known patterns. Anything else is refused with the reason, rather
// than encoded differently from the reference.
func ReadHF(r io.Reader) (*Tokenizer, error) {
	var f hfFile
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if err := f.checkSupported(); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	pattern, err := f.PreTokenizer.pattern()
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: pre_tokenizer: %w", err)
	}
	tokens, err := hfTokens(f.Model.Vocab)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: model.vocab: %w", err)
	}
	merges, err := hfMerges(f.Model.Merges, f.Model.Vocab)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: model.merges: %w", err)
	}
	specials := make(map[string]uint32, len(f.AddedTokens))
	for _, a := range f.AddedTokens {
		specials[a.Content] = a.ID
	}
	return newTokenizer(vocabulary{
		pattern:    pattern,
		tokens:     tokens,
		merges:     merges,
		wholeFirst: f.Model.IgnoreMerges,
		specials:   specials,
		bos:        f.PostProcessor.leadingSpecial(),
	})
}

func (f *hfFile) checkSupported() error {
	m := f.Model
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("model type %q is not supported; only BPE is", m.Type)
	case len(f.Normalizer) > 0 && string(f.Normalizer) != "null":
		return fmt.Errorf("a normalizer is not supported by byte-level BPE here")
	case m.Dropout != nil && *m.Dropout != 0:
		return fmt.Errorf("BPE dropout is not supported")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "",
		m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("subword prefixes and suffixes are not supported by byte-level BPE")
	case m.ByteFallback:
		return fmt.Errorf("byte_fallback is not supported by byte-level BPE")
	}
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip {
			return fmt.Errorf("added token %q: single_word, lstrip and rstrip are not supported", a.Content)
		}
	}
	return nil
}

// pattern returns the pattern of a ByteLevel pre-tokenizer, or of a Split
// followed by a ByteLevel that does not split again.
func (p *hfPreTokenizer) pattern() (Pattern, error) {
	if p == nil {
		return 0, fmt.Errorf("missing; byte-level BPE needs a ByteLevel pre-tokenizer")
	}
	switch {
	case p.Type == "ByteLevel" && p.UseRegex && !p.AddPrefixSpace:
		return PatternGPT2, nil
	case p.Type == "Sequence" && len(p.Pretokenizers) == 2:
		split, bl := p.Pretokenizers[0], p.Pretokenizers[1]
		if bl.Type != "ByteLevel" || bl.UseRegex || bl.AddPrefixSpace {
			break
		}
		return split.splitPattern()
	}
	return 0, fmt.Errorf("only ByteLevel (use_regex, no prefix space) or Sequence[Split, ByteLevel] is supported, got %s", p.describe())
}

// splitPattern accepts a Split whose regex is a known pattern and whose
// behaviour keeps every match as its own piece. The known patterns match
// every rune, so the pieces between matches are always empty.
func (p *hfPreTokenizer) splitPattern() (Pattern, error) {
	if p.Type != "Split" || p.Pattern.Regex == nil {
		return 0, fmt.Errorf("want a Split on a Regex, got %s", p.describe())
	}
	isolated := p.Behavior == "Isolated" && !p.Invert
	removedInverted := p.Behavior == "Removed" && p.Invert
	if !isolated && !removedInverted {
		return 0, fmt.Errorf("split behavior %q with invert %v is not supported", p.Behavior, p.Invert)
	}
	pattern, ok := patternFromRegex(*p.Pattern.Regex)
	if !ok {
		return 0, fmt.Errorf("split regex %q is not one of the known patterns (gpt2, cl100k, o200k)", *p.Pattern.Regex)
	}
	return pattern, nil
}

func (p *hfPreTokenizer) describe() string {
	if p.Type != "Sequence" {
		return p.Type
	}
	var parts []string
	for _, c := range p.Pretokenizers {
		parts = append(parts, c.describe())
	}
	return "Sequence[" + strings.Join(parts, ", ") + "]"
}

// leadingSpecial returns the special token a TemplateProcessing post
// processor puts before a single sequence (Llama's BOS), or "".
func (p *hfPostProcess) leadingSpecial() string {
	if p == nil || p.Type != "TemplateProcessing" || len(p.Single) == 0 || p.Single[0].SpecialToken == nil {
		return ""
	}
	return p.Single[0].SpecialToken.ID
}

func hfTokens(vocab map[string]uint32) (map[string]uint32, error) {
	tokens := make(map[string]uint32, len(vocab))
	for spelled, id := range vocab {
		raw, ok := decodeByteLevel(spelled)
		if !ok {
			return nil, fmt.Errorf("token %q is not byte-level encoded", spelled)
		}
		tokens[string(raw)] = id
	}
	return tokens, nil
}

// hfMerges reads merges written either as "left right" strings or as
// [left, right] pairs; a merge's rank is its position in the list.
func hfMerges(raw json.RawMessage, vocab map[string]uint32) (map[uint64]merge, error) {
	var pairs [][2]string
	var joined []string
	if err := json.Unmarshal(raw, &joined); err == nil {
		pairs = make([][2]string, len(joined))
		for k, s := range joined {
			left, right, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("merge %d (%q) is not two tokens", k, s)
			}
			pairs[k] = [2]string{left, right}
		}
	} else if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, fmt.Errorf("want a list of \"left right\" strings or of pairs: %w", err)
	}
	merges := make(map[uint64]merge, len(pairs))
	for k, p := range pairs {
		left, okL := vocab[p[0]]
		right, okR := vocab[p[1]]
		merged, okM := vocab[p[0]+p[1]]
		if !okL || !okR || !okM {
			return nil, fmt.Errorf("merge %d (%q %q) names a token missing from the vocabulary", k, p[0], p[1])
		}
		key := pairKey(left, right)
		if _, dup := merges[key]; !dup {
			merges[key] = merge{rank: uint32(k), id: merged}
		}
	}
	return merges, nil
}

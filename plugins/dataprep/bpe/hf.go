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
	Normalizer    *hfNormalizer   `json:"normalizer"`
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
	Normalized bool   `json:"normalized"`
}

type hfPreTokenizer struct {
	Type           string            `json:"type"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	UseRegex       bool              `json:"use_regex"`
	Pretokenizers  []*hfPreTokenizer `json:"pretokenizers"`
	Pattern        hfPattern         `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	// Metaspace.
	Replacement   string `json:"replacement"`
	PrependScheme string `json:"prepend_scheme"`
	Split         bool   `json:"split"`
}

type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
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
	UnkToken                *string           `json:"unk_token"`
	FuseUnk                 bool              `json:"fuse_unk"`
}

// ReadHF reads a Hugging Face tokenizer.json holding a BPE model of one of
// two kinds: byte-level (a ByteLevel pre-tokenizer, alone or after a Split
// on one of the known patterns, and an optional NFC normalizer), or
// SentencePiece-style (no ByteLevel step: Prepend and Replace normalizers
// or a Metaspace pre-tokenizer, merges over runes, byte_fallback). Anything
// else is refused with the reason, rather than encoded differently from the
// reference.
func ReadHF(r io.Reader) (*Tokenizer, error) {
	return readHF(r, hfConfig{})
}

func readHF(r io.Reader, cfg hfConfig) (*Tokenizer, error) {
	var f hfFile
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	v, err := f.vocabulary()
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	v.templateBOS = v.bos
	v.bos, v.eos = cfg.specials(v.bos, v.eos, v.specials)
	return newTokenizer(v)
}

// vocabulary checks the file and turns it into a vocabulary.
func (f *hfFile) vocabulary() (vocabulary, error) {
	if err := f.checkModel(); err != nil {
		return vocabulary{}, err
	}
	var v vocabulary
	var err error
	if f.PreTokenizer.hasByteLevel() {
		err = f.byteLevel(&v)
	} else {
		err = f.charLevel(&v)
	}
	if err != nil {
		return vocabulary{}, err
	}
	if v.merges, err = hfMerges(f.Model.Merges, f.Model.Vocab); err != nil {
		return vocabulary{}, fmt.Errorf("model.merges: %w", err)
	}
	v.wholeFirst = f.Model.IgnoreMerges
	v.specials = make(map[string]uint32, len(f.AddedTokens))
	for _, a := range f.AddedTokens {
		v.specials[a.Content] = a.ID
	}
	if v.bos, v.eos, err = f.PostProcessor.template(); err != nil {
		return vocabulary{}, fmt.Errorf("post_processor: %w", err)
	}
	return v, nil
}

func (f *hfFile) checkModel() error {
	m := f.Model
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("model type %q is not supported; only BPE is", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return fmt.Errorf("BPE dropout is not supported")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "",
		m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("subword prefixes and suffixes are not supported")
	}
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip {
			return fmt.Errorf("added token %q: single_word, lstrip and rstrip are not supported", a.Content)
		}
	}
	return nil
}

// byteLevel reads the parts of a byte-level vocabulary: merges over bytes,
// tokens spelled in GPT-2's byte alphabet.
func (f *hfFile) byteLevel(v *vocabulary) error {
	if f.Model.ByteFallback {
		return fmt.Errorf("byte_fallback is not supported by byte-level BPE")
	}
	norm, err := f.Normalizer.build(true)
	if err != nil {
		return fmt.Errorf("normalizer: %w", err)
	}
	if norm != nil && f.hasNormalizedAddedToken() {
		return fmt.Errorf("added tokens matched after normalization (normalized: true) are not supported with a normalizer")
	}
	v.normalize = norm
	if v.pattern, err = f.PreTokenizer.pattern(); err != nil {
		return fmt.Errorf("pre_tokenizer: %w", err)
	}
	if v.tokens, err = hfTokens(f.Model.Vocab, f.AddedTokens); err != nil {
		return fmt.Errorf("model.vocab: %w", err)
	}
	return nil
}

// charLevel reads the parts of a SentencePiece-style vocabulary: merges over
// runes, "▁" for a space, and bytes missing from the vocabulary written as
// <0xXX> tokens or as the unknown token.
func (f *hfFile) charLevel(v *vocabulary) error {
	norm, err := f.Normalizer.build(false)
	if err != nil {
		return fmt.Errorf("normalizer: %w", err)
	}
	if f.hasNormalizedAddedToken() {
		return fmt.Errorf("added tokens matched after normalization (normalized: true) are not supported by SentencePiece-style BPE here")
	}
	meta, split, err := f.PreTokenizer.metaspace()
	if err != nil {
		return fmt.Errorf("pre_tokenizer: %w", err)
	}
	v.normalize = chain(norm, meta)
	v.metaspaceSplit = split
	v.charLevel = true
	v.byteFallback = f.Model.ByteFallback
	v.unk = f.Model.UnkToken
	v.fuseUnk = f.Model.FuseUnk
	v.tokens = f.Model.Vocab
	return nil
}

func (f *hfFile) hasNormalizedAddedToken() bool {
	for _, a := range f.AddedTokens {
		if a.Normalized {
			return true
		}
	}
	return false
}

func (p *hfPreTokenizer) hasByteLevel() bool {
	if p == nil {
		return false
	}
	if p.Type == "ByteLevel" {
		return true
	}
	for _, c := range p.Pretokenizers {
		if c.hasByteLevel() {
			return true
		}
	}
	return false
}

// pattern returns the pattern of a ByteLevel pre-tokenizer, or of a Split
// followed by a ByteLevel that does not split again.
func (p *hfPreTokenizer) pattern() (Pattern, error) {
	prefixSpace := p.AddPrefixSpace != nil && *p.AddPrefixSpace
	switch {
	case p.Type == "ByteLevel" && p.UseRegex && !prefixSpace:
		return PatternGPT2, nil
	case p.Type == "Sequence" && len(p.Pretokenizers) == 2:
		split, bl := p.Pretokenizers[0], p.Pretokenizers[1]
		if bl.Type != "ByteLevel" || bl.UseRegex || (bl.AddPrefixSpace != nil && *bl.AddPrefixSpace) {
			break
		}
		return split.splitPattern()
	case p.Type == "Sequence" && len(p.Pretokenizers) == len(deepSeekV3Regexes)+1 && p.isDeepSeekV3():
		return PatternDeepSeekV3, nil
	}
	return 0, fmt.Errorf("only ByteLevel (use_regex, no prefix space), Sequence[Split, ByteLevel] or DeepSeek-V3's Sequence[Split, Split, Split, ByteLevel] is supported, got %s", p.describe())
}

// isDeepSeekV3 reports whether a Sequence is DeepSeek-V3's: its three
// isolating Splits, then a ByteLevel that does not split again.
func (p *hfPreTokenizer) isDeepSeekV3() bool {
	for k, re := range deepSeekV3Regexes {
		split := p.Pretokenizers[k]
		if split.Type != "Split" || split.Pattern.Regex == nil || *split.Pattern.Regex != re || split.Behavior != "Isolated" || split.Invert {
			return false
		}
	}
	bl := p.Pretokenizers[len(deepSeekV3Regexes)]
	return bl.Type == "ByteLevel" && !bl.UseRegex && (bl.AddPrefixSpace == nil || !*bl.AddPrefixSpace)
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
		return 0, fmt.Errorf("split regex %q is not one of the known patterns (%s)", *p.Pattern.Regex, strings.Join(patternList(), ", "))
	}
	return pattern, nil
}

// metaspace reads the pre-tokenizer of a SentencePiece-style vocabulary:
// none, or Metaspace, which writes spaces as its replacement, may prepend
// one, and may split before each.
func (p *hfPreTokenizer) metaspace() (normalize func(string, bool) string, split bool, err error) {
	if p == nil {
		return nil, false, nil
	}
	if p.Type != "Metaspace" {
		return nil, false, fmt.Errorf("only Metaspace (or none) is supported without a ByteLevel step, got %s", p.describe())
	}
	if p.Replacement != metaspace {
		return nil, false, fmt.Errorf("Metaspace replacement %q is not supported; only %q is", p.Replacement, metaspace)
	}
	scheme := p.PrependScheme
	if scheme == "" {
		scheme = "never"
		if p.AddPrefixSpace == nil || *p.AddPrefixSpace {
			scheme = "always"
		}
	}
	if scheme != "always" && scheme != "first" && scheme != "never" {
		return nil, false, fmt.Errorf("Metaspace prepend_scheme %q is not supported", scheme)
	}
	return func(s string, atStart bool) string {
		s = strings.ReplaceAll(s, " ", metaspace)
		prepend := scheme == "always" || (scheme == "first" && atStart)
		if prepend && !strings.HasPrefix(s, metaspace) {
			s = metaspace + s
		}
		return s
	}, p.Split, nil
}

func (p *hfPreTokenizer) describe() string {
	if p == nil {
		return "none"
	}
	if p.Type != "Sequence" {
		return p.Type
	}
	var parts []string
	for _, c := range p.Pretokenizers {
		parts = append(parts, c.describe())
	}
	return "Sequence[" + strings.Join(parts, ", ") + "]"
}

// hfTokens decodes the byte-level spelling of the vocabulary's tokens. An
// added token the vocabulary also lists under its own text (DeepSeek-V3's
// special tokens) is matched as an added token, not merged to, and is left
// out.
func hfTokens(vocab map[string]uint32, added []hfAddedToken) (map[string]uint32, error) {
	isAdded := make(map[string]bool, len(added))
	for _, a := range added {
		isAdded[a.Content] = true
	}
	tokens := make(map[string]uint32, len(vocab))
	for spelled, id := range vocab {
		raw, ok := decodeByteLevel(spelled)
		if !ok && isAdded[spelled] {
			continue
		}
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

package bpe

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Tokenizer is a loaded BPE vocabulary. It is immutable and safe to share;
// each goroutine encodes through its own Encoder.
type Tokenizer struct {
	// pattern splits text into pieces before merging; 0 leaves it whole
	// (SentencePiece-style vocabularies without a pre-tokenizer).
	pattern Pattern
	// normalize rewrites each stretch of text between special tokens before
	// it is split; atStart says it begins the document. Nil for none.
	normalize func(text string, atStart bool) string
	// metaspaceSplit splits normalized text before each "▁", as a Metaspace
	// pre-tokenizer with split = true does.
	metaspaceSplit bool
	// wordsApart says no merge of this char-level vocabulary can join a rune
	// other than "▁" to a following "▁" (see nextMetaspaceWord).
	wordsApart bool
	// charLevel marks a SentencePiece-style vocabulary: merging starts from
	// the runes of a piece (tokens maps each token's text to its id) rather
	// than from its bytes (tokens maps each token's bytes to its id).
	charLevel bool
	tokens    map[string]uint32
	// byteIDs are the tokens of single bytes: every byte's in byte-level
	// BPE, the <0xXX> fallbacks of runes missing from a char-level vocabulary.
	byteIDs [256]uint32
	// hasByte marks the bytes a char-level vocabulary has a fallback for.
	hasByte [256]bool
	// unk stands for a rune a char-level vocabulary cannot spell (without
	// byte fallback); consecutive ones are fused when fuseUnk is set.
	unk             uint32
	hasUnk, fuseUnk bool
	byteFallback    bool
	// merges maps an adjacent pair of ids to the merge that joins them.
	merges map[uint64]merge
	// wholeFirst emits a piece that is itself a token without merging, as
	// tiktoken always does and Hugging Face does with ignore_merges.
	wholeFirst   bool
	longestToken int
	specials     specialSet
	// pieces holds every id's bytes, for decoding.
	pieces   [][]byte
	bos, eos string
	// templateBOS is the special token Hugging Face's encode puts first.
	templateBOS string
	vocabSize   int
}

// merge is the result of joining a pair: the merged token and the priority
// of the merge (lower merges first).
type merge struct {
	rank uint32
	id   uint32
}

const noRank = ^uint32(0)

func pairKey(left, right uint32) uint64 { return uint64(left)<<32 | uint64(right) }

// vocabulary is what a vocabulary file contributes, before validation.
type vocabulary struct {
	pattern        Pattern
	normalize      func(string, bool) string
	metaspaceSplit bool
	// charLevel vocabularies (see Tokenizer) set byteFallback and/or unk.
	charLevel    bool
	byteFallback bool
	unk          *string
	fuseUnk      bool
	tokens       map[string]uint32
	merges       map[uint64]merge
	wholeFirst   bool
	specials     map[string]uint32
	bos, eos     string
	// templateBOS: see Tokenizer.
	templateBOS string
}

// newTokenizer validates v and builds the lookup tables.
func newTokenizer(v vocabulary) (*Tokenizer, error) {
	t := &Tokenizer{
		pattern:        v.pattern,
		normalize:      v.normalize,
		metaspaceSplit: v.metaspaceSplit,
		charLevel:      v.charLevel,
		byteFallback:   v.byteFallback,
		fuseUnk:        v.fuseUnk,
		tokens:         v.tokens,
		merges:         v.merges,
		wholeFirst:     v.wholeFirst,
		bos:            v.bos,
		eos:            v.eos,
		templateBOS:    v.templateBOS,
	}
	if err := t.buildByteIDs(v); err != nil {
		return nil, err
	}
	t.wordsApart = v.charLevel && wordsApart(v.tokens)
	if err := t.buildPieces(v.specials); err != nil {
		return nil, err
	}
	t.specials = newSpecialSet(v.specials)
	for _, name := range []string{v.bos, v.eos} {
		if _, ok := v.specials[name]; name != "" && !ok {
			return nil, fmt.Errorf("special token %q is not in the vocabulary", name)
		}
	}
	return t, nil
}

// wordsApart reports whether "▁" is a token and no token holds a rune other
// than "▁" followed by "▁": then no merge crosses the start of a word.
func wordsApart(tokens map[string]uint32) bool {
	if _, ok := tokens[metaspace]; !ok {
		return false
	}
	for text := range tokens {
		for k := strings.Index(text, metaspace); k >= 0; {
			if k > 0 && !strings.HasSuffix(text[:k], metaspace) {
				return false
			}
			next := strings.Index(text[k+len(metaspace):], metaspace)
			if next < 0 {
				break
			}
			k += len(metaspace) + next
		}
	}
	return true
}

// buildByteIDs finds the tokens of single bytes: a byte-level vocabulary
// needs all of them; a byte-fallback one spells them <0xXX> and may lack
// some (Gemma's has a tab token instead of <0x09>), which then needs the
// unknown token.
func (t *Tokenizer) buildByteIDs(v vocabulary) error {
	if !v.charLevel {
		for b := range 256 {
			id, ok := v.tokens[string([]byte{byte(b)})]
			if !ok {
				return fmt.Errorf("vocabulary lacks a token for byte 0x%02x; a byte-level BPE vocabulary needs all 256", b)
			}
			t.byteIDs[b] = id
		}
		return nil
	}
	if v.unk != nil {
		id, ok := v.tokens[*v.unk]
		if !ok {
			return fmt.Errorf("unk_token %q is not in the vocabulary", *v.unk)
		}
		t.unk, t.hasUnk = id, true
	}
	complete := v.byteFallback
	for b := range 256 {
		id, ok := v.tokens[fmt.Sprintf("<0x%02X>", b)]
		t.byteIDs[b], t.hasByte[b] = id, ok && v.byteFallback
		complete = complete && ok
	}
	if !complete && !t.hasUnk {
		return fmt.Errorf("a vocabulary without byte_fallback, or without all 256 <0xXX> tokens, needs an unk_token")
	}
	return nil
}

// buildPieces fills the id-to-bytes table and checks that ids are unique.
func (t *Tokenizer) buildPieces(specials map[string]uint32) error {
	maxID := uint32(0)
	for text, id := range t.tokens {
		maxID = max(maxID, id)
		t.longestToken = max(t.longestToken, len(text))
	}
	for _, id := range specials {
		maxID = max(maxID, id)
	}
	t.vocabSize = int(maxID) + 1
	t.pieces = make([][]byte, t.vocabSize)
	add := func(text string, id uint32, kind string) error {
		if t.pieces[id] != nil && string(t.pieces[id]) != text {
			return fmt.Errorf("id %d is given to both %q and %s %q", id, t.pieces[id], kind, text)
		}
		t.pieces[id] = []byte(text)
		return nil
	}
	for text, id := range t.tokens {
		if err := add(text, id, "token"); err != nil {
			return err
		}
	}
	for _, text := range slices.Sorted(maps.Keys(specials)) {
		if err := add(text, specials[text], "special token"); err != nil {
			return err
		}
	}
	for b, id := range t.byteIDs {
		if t.hasByte[b] {
			t.pieces[id] = []byte{byte(b)}
		}
	}
	return nil
}

// Pattern returns the pre-tokenizer pattern of the vocabulary, or 0 where
// text is not split by a pattern.
func (t *Tokenizer) Pattern() Pattern { return t.pattern }

// Describe names the kind of vocabulary, for logs.
func (t *Tokenizer) Describe() string {
	kind := "byte-level BPE"
	if t.charLevel {
		kind = "SentencePiece-style BPE"
		if t.byteFallback {
			kind += " with byte fallback"
		}
	}
	if t.pattern != 0 {
		kind += ", pattern " + t.pattern.String()
	}
	if t.normalize != nil {
		kind += ", normalized"
	}
	return kind
}

// VocabSize is one more than the largest id, special tokens included: the
// size of the embedding table the ids index.
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// SpecialID returns the id of a special (or added) token given by its text.
func (t *Tokenizer) SpecialID(text string) (uint32, bool) {
	id, ok := t.specials.ids[text]
	return id, ok
}

// DefaultBOS and DefaultEOS name the special tokens that begin and end a
// document for this vocabulary, or "" where it has none.
func (t *Tokenizer) DefaultBOS() string { return t.bos }

// DefaultEOS: see DefaultBOS.
func (t *Tokenizer) DefaultEOS() string { return t.eos }

// Decode returns the bytes the ids stand for. Unknown ids are an error.
// For a SentencePiece-style vocabulary these are the bytes of the
// normalized text (spaces written as "▁"), byte fallbacks as their byte.
func (t *Tokenizer) Decode(ids []uint32) ([]byte, error) {
	var out []byte
	for _, id := range ids {
		if int(id) >= len(t.pieces) || t.pieces[id] == nil {
			return nil, fmt.Errorf("id %d is not in the vocabulary", id)
		}
		out = append(out, t.pieces[id]...)
	}
	return out, nil
}

// specialSet finds special tokens in text: leftmost first, and the longest of
// those starting at the same place, as Hugging Face's added-token splitter.
type specialSet struct {
	ids map[string]uint32
	// byFirst lists the special tokens by first byte, longest first.
	byFirst [256][]string
}

func newSpecialSet(ids map[string]uint32) specialSet {
	s := specialSet{ids: ids}
	for text := range ids {
		if text != "" {
			s.byFirst[text[0]] = append(s.byFirst[text[0]], text)
		}
	}
	for b := range s.byFirst {
		slices.SortFunc(s.byFirst[b], func(x, y string) int {
			if len(x) != len(y) {
				return len(y) - len(x)
			}
			return strings.Compare(x, y)
		})
	}
	return s
}

// next returns the position and text of the first special token in s at or
// after i, or -1.
func (s *specialSet) next(text string, i int) (int, string) {
	for ; i < len(text); i++ {
		for _, cand := range s.byFirst[text[i]] {
			if strings.HasPrefix(text[i:], cand) {
				return i, cand
			}
		}
	}
	return -1, ""
}

package bpe

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Tokenizer is a loaded byte-level BPE vocabulary. It is immutable and safe
// to share; each goroutine encodes through its own Encoder.
type Tokenizer struct {
	pattern Pattern
	// tokens maps each token's bytes to its id.
	tokens  map[string]uint32
	byteIDs [256]uint32
	// merges maps an adjacent pair of ids to the merge that joins them.
	merges map[uint64]merge
	// wholeFirst emits a piece that is itself a token without merging, as
	// tiktoken always does and Hugging Face does with ignore_merges.
	wholeFirst   bool
	longestToken int
	specials     specialSet
	// pieces holds every id's bytes, for decoding.
	pieces    [][]byte
	bos, eos  string
	vocabSize int
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
	pattern    Pattern
	tokens     map[string]uint32
	merges     map[uint64]merge
	wholeFirst bool
	specials   map[string]uint32
	bos, eos   string
}

// newTokenizer validates v and builds the lookup tables.
func newTokenizer(v vocabulary) (*Tokenizer, error) {
	t := &Tokenizer{
		pattern:    v.pattern,
		tokens:     v.tokens,
		merges:     v.merges,
		wholeFirst: v.wholeFirst,
		bos:        v.bos,
		eos:        v.eos,
	}
	for b := range 256 {
		id, ok := v.tokens[string([]byte{byte(b)})]
		if !ok {
			return nil, fmt.Errorf("vocabulary lacks a token for byte 0x%02x; a byte-level BPE vocabulary needs all 256", b)
		}
		t.byteIDs[b] = id
	}
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
	return nil
}

// Pattern returns the pre-tokenizer pattern of the vocabulary.
func (t *Tokenizer) Pattern() Pattern { return t.pattern }

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

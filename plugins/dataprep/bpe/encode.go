package bpe

import (
	"strings"
	"unicode/utf8"
)

// Encoder turns text into token ids. It keeps scratch space and a cache of
// recently merged pieces, so it is not safe for concurrent use: give each
// goroutine its own.
type Encoder struct {
	t    *Tokenizer
	next func(string, int) int
	// cache maps a piece to its ids, stored in arena.
	cache map[string]span
	arena []uint32
	ids   []uint32
	pairs []merge
	heap  mergeHeap
	syms  []symbol
}

type span struct{ off, n uint32 }

// Cache bounds: pieces longer than cacheMaxPiece are rare and not worth
// keeping; the cache is dropped whole when it holds cacheMaxEntries.
const (
	cacheMaxPiece   = 64
	cacheMaxEntries = 1 << 16
)

// NewEncoder returns an Encoder for t.
func (t *Tokenizer) NewEncoder() *Encoder {
	initClasses()
	next := wholeText
	switch {
	case t.pattern != 0:
		next = t.pattern.scanner()
	case t.metaspaceSplit:
		next = nextMetaspace
	case t.wordsApart:
		next = nextMetaspaceWord
	}
	return &Encoder{t: t, next: next, cache: make(map[string]span)}
}

// wholeText keeps text as one piece, as a vocabulary without a
// pre-tokenizer does.
func wholeText(s string, _ int) int { return len(s) }

// nextMetaspace ends a piece before the next "▁" (a Metaspace
// pre-tokenizer's split: each "▁" begins a piece).
func nextMetaspace(s string, i int) int {
	start := i + len(metaspace)
	if start >= len(s) {
		return len(s)
	}
	if k := strings.Index(s[start:], metaspace); k >= 0 {
		return start + k
	}
	return len(s)
}

// nextMetaspaceWord ends a piece before the next "▁" that follows another
// rune: where the vocabulary has no token joining a rune to a following "▁"
// (wordsApart), no merge can cross there, so merging the words one by one
// gives the ids merging the whole text would, in far less time.
func nextMetaspaceWord(s string, i int) int {
	for j := i + 1; j < len(s); {
		k := strings.Index(s[j:], metaspace)
		if k < 0 {
			break
		}
		j += k
		if !strings.HasSuffix(s[:j], metaspace) {
			return j
		}
		j += len(metaspace)
	}
	return len(s)
}

// metaspace is the rune SentencePiece writes for a space.
const metaspace = "▁"

// Encode appends the ids of text to dst and returns it. Special-token text is
// encoded as ordinary text, as tiktoken's encode_ordinary does.
func (e *Encoder) Encode(dst []uint32, text string) []uint32 {
	return e.encodeSegment(dst, text, true)
}

// encodeSegment encodes text that holds no special token; atStart says it
// begins the document, which some normalizers treat apart.
func (e *Encoder) encodeSegment(dst []uint32, text string, atStart bool) []uint32 {
	if e.t.normalize != nil {
		text = e.t.normalize(text, atStart)
	}
	for i := 0; i < len(text); {
		j := e.next(text, i)
		dst = e.encodePiece(dst, text[i:j])
		i = j
	}
	return dst
}

// EncodeSpecial is Encode, except that special tokens written in text become
// their ids, as Hugging Face's encode and tiktoken's encode with
// allowed_special="all" do. The text between them is normalized stretch by
// stretch, as Hugging Face does.
func (e *Encoder) EncodeSpecial(dst []uint32, text string) []uint32 {
	for start := 0; start < len(text); {
		at, special := e.t.specials.next(text, start)
		if at < 0 {
			return e.encodeSegment(dst, text[start:], start == 0)
		}
		if at > start {
			dst = e.encodeSegment(dst, text[start:at], start == 0)
		}
		dst = append(dst, e.t.specials.ids[special])
		start = at + len(special)
	}
	return dst
}

func (e *Encoder) encodePiece(dst []uint32, piece string) []uint32 {
	t := e.t
	if len(piece) == 1 && !t.charLevel {
		return append(dst, t.byteIDs[piece[0]])
	}
	if s, ok := e.cache[piece]; ok {
		return append(dst, e.arena[s.off:s.off+s.n]...)
	}
	start := len(dst)
	if id, ok := t.wholeToken(piece); ok {
		dst = append(dst, id)
	} else if ids := e.symbols(piece); len(ids) <= linearMergeMax {
		dst = e.mergeLinear(dst, ids)
	} else {
		dst = e.mergeHeap(dst, ids)
	}
	if len(piece) <= cacheMaxPiece {
		e.remember(piece, dst[start:])
	}
	return dst
}

func (e *Encoder) remember(piece string, ids []uint32) {
	if len(e.cache) >= cacheMaxEntries {
		clear(e.cache)
		e.arena = e.arena[:0]
	}
	e.cache[strings.Clone(piece)] = span{off: uint32(len(e.arena)), n: uint32(len(ids))}
	e.arena = append(e.arena, ids...)
}

// wholeToken returns the id of piece where the vocabulary emits a piece that
// is a token whole.
func (t *Tokenizer) wholeToken(piece string) (uint32, bool) {
	if !t.wholeFirst || len(piece) > t.longestToken {
		return 0, false
	}
	id, ok := t.tokens[piece]
	return id, ok
}

// rankOf returns the merge joining left and right, or one with noRank.
func (t *Tokenizer) rankOf(left, right uint32) merge {
	if m, ok := t.merges[pairKey(left, right)]; ok {
		return m
	}
	return merge{rank: noRank}
}

// linearMergeMax is the longest piece merged by rescanning all pairs after
// each merge (quadratic, but fastest for the short pieces that are nearly
// all of them); longer pieces go through a heap.
const linearMergeMax = 128

// symbols returns the ids merging starts from, in e.ids: a byte-level
// vocabulary's byte tokens, or a char-level one's rune tokens, a rune it
// lacks written as its bytes' fallback tokens or as the unknown token.
func (e *Encoder) symbols(piece string) []uint32 {
	t := e.t
	ids := e.ids[:0]
	if !t.charLevel {
		for k := 0; k < len(piece); k++ {
			ids = append(ids, t.byteIDs[piece[k]])
		}
		e.ids = ids
		return ids
	}
	lastUnk := false
	for i := 0; i < len(piece); {
		_, size := utf8.DecodeRuneInString(piece[i:])
		r := piece[i : i+size]
		i += size
		if id, ok := t.tokens[r]; ok {
			ids = append(ids, id)
			lastUnk = false
			continue
		}
		if t.fallsBack(r) {
			for k := 0; k < len(r); k++ {
				ids = append(ids, t.byteIDs[r[k]])
			}
			lastUnk = false
			continue
		}
		if !(lastUnk && t.fuseUnk) {
			ids = append(ids, t.unk)
		}
		lastUnk = true
	}
	e.ids = ids
	return ids
}

// fallsBack reports whether every byte of r has a byte-fallback token.
func (t *Tokenizer) fallsBack(r string) bool {
	for k := 0; k < len(r); k++ {
		if !t.hasByte[r[k]] {
			return false
		}
	}
	return true
}

// mergeLinear applies BPE to the symbols ids (in e.ids): repeatedly join the
// adjacent pair with the lowest rank, the leftmost on ties, until no pair can
// be joined.
func (e *Encoder) mergeLinear(dst []uint32, ids []uint32) []uint32 {
	t := e.t
	pairs := e.pairs[:0]
	for k := 0; k+1 < len(ids); k++ {
		pairs = append(pairs, t.rankOf(ids[k], ids[k+1]))
	}
	for {
		best := -1
		bestRank := noRank
		for k, p := range pairs {
			if p.rank < bestRank {
				best, bestRank = k, p.rank
			}
		}
		if best < 0 {
			break
		}
		ids[best] = pairs[best].id
		ids = append(ids[:best+1], ids[best+2:]...)
		pairs = append(pairs[:best], pairs[best+1:]...)
		if best > 0 {
			pairs[best-1] = t.rankOf(ids[best-1], ids[best])
		}
		if best < len(pairs) {
			pairs[best] = t.rankOf(ids[best], ids[best+1])
		}
	}
	e.ids, e.pairs = ids, pairs
	return append(dst, ids...)
}

package bpe

import (
	"fmt"
	"unicode/utf8"
)

// Pattern names one of the pre-tokenizer regular expressions of the byte-level
// BPE vocabularies in use. Each is implemented by a hand-written scanner that
// returns exactly the pieces the regex's leftmost-first matches would; the
// regexes themselves are kept in patternRegex and the tests prove the two
// equal.
type Pattern int

// The supported patterns.
const (
	// PatternGPT2 is GPT-2's (r50k_base, p50k_base and Hugging Face ByteLevel
	// with use_regex = true).
	PatternGPT2 Pattern = iota + 1
	// PatternCL100K is cl100k_base's, which Llama 3 uses unchanged.
	PatternCL100K
	// PatternO200K is o200k_base's.
	PatternO200K
	// PatternQwen2 is cl100k_base's with single digits, as Qwen2 and Qwen3
	// split.
	PatternQwen2
)

// patternRegex holds the reference regexes, as tiktoken and tokenizer.json
// files spell them.
var patternRegex = map[Pattern]string{
	PatternGPT2:   `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
	PatternCL100K: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	PatternO200K: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	PatternQwen2: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

var patternNames = map[Pattern]string{
	PatternGPT2:   "gpt2",
	PatternCL100K: "cl100k",
	PatternO200K:  "o200k",
	PatternQwen2:  "qwen2",
}

// patternList names the known patterns, in order.
func patternList() []string {
	var names []string
	for p := PatternGPT2; p <= PatternQwen2; p++ {
		names = append(names, p.String())
	}
	return names
}

func (p Pattern) String() string {
	if n, ok := patternNames[p]; ok {
		return n
	}
	return fmt.Sprintf("Pattern(%d)", int(p))
}

// Regex returns the reference regular expression the pattern implements.
func (p Pattern) Regex() string { return patternRegex[p] }

// patternFromRegex recognises a reference regex given in a vocabulary file.
func patternFromRegex(re string) (Pattern, bool) {
	for p, known := range patternRegex {
		if re == known {
			return p, true
		}
	}
	return 0, false
}

// Split calls yield with each pre-tokenizer piece of text, in order. The
// pieces concatenate to text.
func (p Pattern) Split(text string, yield func(piece string)) {
	initClasses()
	next := p.scanner()
	for i := 0; i < len(text); {
		j := next(text, i)
		yield(text[i:j])
		i = j
	}
}

// scanner returns the function that, given text and a position inside it,
// returns the end of the piece starting there. Every rune is matched by some
// alternative of every pattern, so pieces are never empty and leave no gaps.
func (p Pattern) scanner() func(string, int) int {
	switch p {
	case PatternGPT2:
		return nextGPT2
	case PatternCL100K:
		return nextCL100K
	case PatternO200K:
		return nextO200K
	case PatternQwen2:
		return nextQwen2
	}
	panic(fmt.Sprintf("bpe: scanner for unknown %v", p))
}

// nextGPT2 scans 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+.
func nextGPT2(s string, i int) int {
	if s[i] == '\'' {
		if n := contraction(s, i, false); n > 0 {
			return i + n
		}
	}
	j := i
	if s[i] == ' ' && i+1 < len(s) {
		j = i + 1
	}
	c, _ := classAt(s, j)
	switch {
	case c&classLetter != 0:
		return runEnd(s, j, classLetter)
	case c&classNumber != 0:
		return runEnd(s, j, classNumber)
	case c&classSpace == 0:
		return otherRunEnd(s, j)
	}
	return spaceRunEnd(s, i)
}

// nextCL100K scans (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+.
func nextCL100K(s string, i int) int { return cl100kLikeEnd(s, i, 3) }

// nextQwen2 scans the cl100k pattern with \p{N} for \p{N}{1,3}.
func nextQwen2(s string, i int) int { return cl100kLikeEnd(s, i, 1) }

// cl100kLikeEnd scans cl100k's pattern with numbers of at most maxDigits.
func cl100kLikeEnd(s string, i int, maxDigits int) int {
	if s[i] == '\'' {
		if n := contraction(s, i, true); n > 0 {
			return i + n
		}
	}
	c0, size0 := classAt(s, i)
	if c0&classLetter != 0 {
		return runEnd(s, i, classLetter)
	}
	if c0&(classNumber|classLineBreak) == 0 && i+size0 < len(s) {
		if c1, _ := classAt(s, i+size0); c1&classLetter != 0 {
			return runEnd(s, i+size0, classLetter)
		}
	}
	if c0&classNumber != 0 {
		return numberEnd(s, i, maxDigits)
	}
	if j := punctuationEnd(s, i, "\r\n"); j > i {
		return j
	}
	return lineOrSpaceRunEnd(s, i)
}

// nextO200K scans the o200k_base pattern (see patternRegex): words with an
// optional leading punctuation rune and a trailing contraction, then numbers,
// punctuation runs and whitespace as in cl100k_base.
func nextO200K(s string, i int) int {
	if j := o200kWordEnd(s, i); j > i {
		return j
	}
	if c, _ := classAt(s, i); c&classNumber != 0 {
		return numberEnd(s, i, 3)
	}
	if j := punctuationEnd(s, i, "\r\n/"); j > i {
		return j
	}
	return lineOrSpaceRunEnd(s, i)
}

// o200kWordEnd tries the two word alternatives of o200k_base at i, each first
// with and then without the optional leading rune, as the regex backtracks.
// It returns i when neither matches.
func o200kWordEnd(s string, i int) int {
	starts := [2]int{i, i}
	c0, size0 := classAt(s, i)
	if c0&(classLetter|classNumber|classLineBreak) == 0 {
		starts[0] = i + size0
	}
	for _, word := range [2]func(string, int) int{upperStarLowerPlusEnd, upperPlusLowerStarEnd} {
		for k, start := range starts {
			if k == 1 && start == starts[0] {
				break
			}
			if e := word(s, start); e > start {
				return e + contraction(s, e, true)
			}
		}
	}
	return i
}

// upperStarLowerPlusEnd matches [upperish]*[lowerish]+ at i, giving runes
// back from the greedy upperish run until a lowerish one can follow. It
// returns i when there is no match.
func upperStarLowerPlusEnd(s string, i int) int {
	for q := runEnd(s, i, classUpperish); ; {
		if q < len(s) {
			if c, _ := classAt(s, q); c&classLowerish != 0 {
				return runEnd(s, q, classLowerish)
			}
		}
		if q == i {
			return i
		}
		_, size := lastClass(s, q)
		q -= size
	}
}

// upperPlusLowerStarEnd matches [upperish]+[lowerish]* at i, or returns i.
func upperPlusLowerStarEnd(s string, i int) int {
	e := runEnd(s, i, classUpperish)
	if e == i {
		return i
	}
	return runEnd(s, e, classLowerish)
}

// numberEnd matches \p{N}{1,maxDigits} at i, which holds a number.
func numberEnd(s string, i int, maxDigits int) int {
	for n := 0; n < maxDigits && i < len(s); n++ {
		c, size := classAt(s, i)
		if c&classNumber == 0 {
			break
		}
		i += size
	}
	return i
}

// punctuationEnd matches ` ?[^\s\p{L}\p{N}]+[tail]*` at i, or returns i.
func punctuationEnd(s string, i int, tail string) int {
	j := i
	if s[i] == ' ' && i+1 < len(s) {
		j = i + 1
	}
	if c, _ := classAt(s, j); c&(classLetter|classNumber|classSpace) != 0 {
		return i
	}
	e := otherRunEnd(s, j)
	for e < len(s) && isByteIn(s[e], tail) {
		e++
	}
	return e
}

// lineOrSpaceRunEnd matches \s*[\r\n]+|\s+(?!\S)|\s+ at i, which holds a
// space. The first alternative ends just after the last line break of the
// whitespace run.
func lineOrSpaceRunEnd(s string, i int) int {
	e := runEnd(s, i, classSpace)
	for k := e - 1; k >= i; k-- {
		if s[k] == '\r' || s[k] == '\n' {
			return k + 1
		}
	}
	return spaceRunTail(s, i, e)
}

// spaceRunEnd matches \s+(?!\S)|\s+ at i, which holds a space.
func spaceRunEnd(s string, i int) int {
	return spaceRunTail(s, i, runEnd(s, i, classSpace))
}

// spaceRunTail resolves \s+(?!\S)|\s+ for the whitespace run s[i:e]: a run
// followed by a non-space gives its last rune to the next piece, unless that
// rune is all of it.
func spaceRunTail(s string, i, e int) int {
	if e == len(s) {
		return e
	}
	_, size := utf8.DecodeLastRuneInString(s[i:e])
	if e-size > i {
		return e - size
	}
	return e
}

// contraction returns the length of 's|'t|'re|'ve|'m|'ll|'d at i, matched
// case-insensitively (with Unicode simple case folding, so ſ is an s) when
// fold is set, or 0.
func contraction(s string, i int, fold bool) int {
	if i >= len(s) || s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	rest := s[i+1:]
	lower := func(k int) (byte, int) {
		b := rest[k]
		if !fold {
			return b, 1
		}
		if 'A' <= b && b <= 'Z' {
			return b + 'a' - 'A', 1
		}
		if b == 0xC5 && k+1 < len(rest) && rest[k+1] == 0xBF { // ſ U+017F
			return 's', 2
		}
		return b, 1
	}
	b, n := lower(0)
	switch b {
	case 's', 't', 'm', 'd':
		return 1 + n
	case 'r', 'v', 'l':
		if n >= len(rest) {
			return 0
		}
		want := byte('e')
		if b == 'l' {
			want = 'l'
		}
		if b2, n2 := lower(n); b2 == want {
			return 1 + n + n2
		}
	}
	return 0
}

func isByteIn(b byte, set string) bool {
	for k := 0; k < len(set); k++ {
		if set[k] == b {
			return true
		}
	}
	return false
}

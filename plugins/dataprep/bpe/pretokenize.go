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
	// PatternDeepSeekV3 is DeepSeek-V3's chain of three Splits (see
	// deepSeekV3Regexes): numbers in threes, runs of CJK ideographs and
	// kana, then words, punctuation and whitespace.
	PatternDeepSeekV3
)

// deepSeekV3Regexes are the Split regexes DeepSeek-V3's pre-tokenizer
// applies one after the other, each to the pieces of the one before,
// every match kept as its own piece and the text between matches too.
var deepSeekV3Regexes = [3]string{
	`\p{N}{1,3}`,
	`[一-龥぀-ゟ゠-ヿ]+`,
	"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
}

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
	PatternGPT2:       "gpt2",
	PatternCL100K:     "cl100k",
	PatternO200K:      "o200k",
	PatternQwen2:      "qwen2",
	PatternDeepSeekV3: "deepseek_v3",
}

// patternList names the known patterns, in order.
func patternList() []string {
	var names []string
	for p := PatternGPT2; p <= PatternDeepSeekV3; p++ {
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

// Regex returns the reference regular expression the pattern implements;
// DeepSeek-V3's chain of them has none (deepSeekV3Regexes).
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
	case PatternDeepSeekV3:
		return nextDeepSeekV3
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

// nextDeepSeekV3 scans DeepSeek-V3's chain of Splits at i, which is where
// a piece of the chain's output starts. The first Split cuts numbers into
// runs of up to three; the second isolates runs of CJK ideographs and kana
// in what is left; the third splits each resulting stretch with its regex,
// the text no alternative matches becoming pieces of their own. Every run
// the third Split scans stops at the end of its stretch, and a whitespace
// run that reaches it is at the end of its text for \s+(?!\S).
func nextDeepSeekV3(s string, i int) int {
	if c, _ := classAt(s, i); c&classNumber != 0 {
		return numberEnd(s, i, 3)
	}
	st := deepSeekStretch{cjk: isDeepSeekCJK(s, i)}
	if e := st.matchEnd(s, i); e > i {
		return e
	}
	_, size := classAt(s, i)
	for j := i + size; j < len(s); j += size {
		if st.stop(s, j) || st.matchEnd(s, j) > j {
			return j
		}
		_, size = classAt(s, j)
	}
	return len(s)
}

// deepSeekStretch is a piece of the first two Splits, which the third
// splits: a run of CJK runes, or text between numbers and CJK runs.
type deepSeekStretch struct{ cjk bool }

// stop reports whether the rune at i is past the end of the stretch.
func (st deepSeekStretch) stop(s string, i int) bool {
	if st.cjk {
		return !isDeepSeekCJK(s, i)
	}
	c, _ := classAt(s, i)
	return c&classNumber != 0 || isDeepSeekCJK(s, i)
}

// matchEnd matches the third Split's regex at i, or returns i.
func (st deepSeekStretch) matchEnd(s string, i int) int {
	if s[i] < utf8.RuneSelf && isByteIn(s[i], "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") {
		e := i + 1
		for e < len(s) && ('A' <= s[e] && s[e] <= 'Z' || 'a' <= s[e] && s[e] <= 'z') {
			e++
		}
		if e > i+1 {
			return e
		}
	}
	c0, size0 := classAt(s, i)
	const word = classLetter | classMark
	if c0&word != 0 {
		return st.runEnd(s, i, word)
	}
	if c0&(classLetter|classPunct|classSymbol|classLineBreak) == 0 && i+size0 < len(s) && !st.stop(s, i+size0) {
		if c1, _ := classAt(s, i+size0); c1&word != 0 {
			return st.runEnd(s, i+size0, word)
		}
	}
	const punct = classPunct | classSymbol
	j := i
	if s[i] == ' ' && i+1 < len(s) && !st.stop(s, i+1) {
		j = i + 1
	}
	if c, _ := classAt(s, j); c&punct != 0 {
		e := st.runEnd(s, j, punct)
		for e < len(s) && (s[e] == '\r' || s[e] == '\n') && !st.stop(s, e) {
			e++
		}
		return e
	}
	if c0&classSpace != 0 {
		return st.spaceEnd(s, i)
	}
	return i
}

// runEnd is runEnd stopping at the end of the stretch.
func (st deepSeekStretch) runEnd(s string, i int, want uint16) int {
	for i < len(s) && !st.stop(s, i) {
		c, size := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += size
	}
	return i
}

// spaceEnd matches \s*[\r\n]+|\s+(?!\S)|\s+ at i, which holds a space;
// a run that reaches the end of the stretch is whole, as at the end of text.
func (st deepSeekStretch) spaceEnd(s string, i int) int {
	e := st.runEnd(s, i, classSpace)
	for k := e - 1; k >= i; k-- {
		if s[k] == '\r' || s[k] == '\n' {
			return k + 1
		}
	}
	if e == len(s) || st.stop(s, e) {
		return e
	}
	return spaceRunTail(s, i, e)
}

// isDeepSeekCJK reports whether the rune at i is in [一-龥぀-ゟ゠-ヿ].
func isDeepSeekCJK(s string, i int) bool {
	if s[i] < 0xE3 || s[i] > 0xE9 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r >= 0x4E00 && r <= 0x9FA5 || r >= 0x3040 && r <= 0x30FF
}

func isByteIn(b byte, set string) bool {
	for k := 0; k < len(set); k++ {
		if set[k] == b {
			return true
		}
	}
	return false
}

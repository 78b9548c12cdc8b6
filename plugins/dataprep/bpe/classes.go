package bpe

import (
	"slices"
	"sync"
	"unicode/utf8"
)

// Rune classes the pre-tokenizer patterns are written in. A rune may be in
// several: a combining mark is both upperish and lowerish.
const (
	classLetter    uint16 = 1 << iota // \p{L}
	classNumber                       // \p{N}
	classSpace                        // \s (Unicode White_Space)
	classUpperish                     // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] in o200k
	classLowerish                     // [\p{Ll}\p{Lm}\p{Lo}\p{M}] in o200k
	classLineBreak                    // [\r\n]
	classPunct                        // \p{P}, in DeepSeek-V3's pattern
	classSymbol                       // \p{S}, in DeepSeek-V3's pattern
	classMark                         // \p{M}, in DeepSeek-V3's pattern
)

// classOther is the class of a rune in none of the classes above (an
// unassigned or control rune, say).
const classOther uint16 = 0

// bmpClasses holds the class of every rune of the Basic Multilingual Plane,
// so the scanner does one load per rune instead of walking Unicode tables.
var (
	bmpClasses     [0x10000]uint16
	bmpClassesOnce sync.Once
)

func initClasses() {
	bmpClassesOnce.Do(func() {
		for r := range rune(0x10000) {
			bmpClasses[r] = computeClass(r)
		}
	})
}

// classRun is a run of runes [lo, hi] sharing the same classes.
type classRun struct {
	lo, hi  rune
	classes uint16
}

// computeClass looks r up in the tables taken from Hugging Face tokenizers
// (unicode_tables.go), whose regex engine follows a newer Unicode version
// than Go's unicode package: runes assigned since Unicode 15.0, such as CJK
// Extension I, are letters there and must be here too.
func computeClass(r rune) uint16 {
	var c uint16
	if k, found := slices.BinarySearchFunc(hfClassRuns, r, func(run classRun, r rune) int {
		switch {
		case run.hi < r:
			return -1
		case run.lo > r:
			return 1
		}
		return 0
	}); found {
		c = hfClassRuns[k].classes
	}
	if r == '\r' || r == '\n' {
		c |= classLineBreak
	}
	return c
}

// classAt decodes the rune at s[i] and returns its class and width.
// Invalid UTF-8 is one byte of class other, as U+FFFD would be.
func classAt(s string, i int) (uint16, int) {
	b := s[i]
	if b < utf8.RuneSelf {
		return bmpClasses[b], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return bmpClasses[r], size
	}
	return computeClass(r), size
}

// lastClass decodes the last rune of s[:end] and returns its class and width.
func lastClass(s string, end int) (uint16, int) {
	r, size := utf8.DecodeLastRuneInString(s[:end])
	if r < 0x10000 {
		return bmpClasses[r], size
	}
	return computeClass(r), size
}

// runEnd returns the end of the run of runes starting at i that have any of
// the bits in want.
func runEnd(s string, i int, want uint16) int {
	for i < len(s) {
		c, size := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += size
	}
	return i
}

// otherRunEnd returns the end of the run of [^\s\p{L}\p{N}] runes at i.
func otherRunEnd(s string, i int) int {
	for i < len(s) {
		c, size := classAt(s, i)
		if c&(classLetter|classNumber|classSpace) != 0 {
			break
		}
		i += size
	}
	return i
}

package bpe

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Rune classes the pre-tokenizer patterns are written in. A rune may be in
// several: a combining mark is both upperish and lowerish.
const (
	classLetter    uint8 = 1 << iota // \p{L}
	classNumber                      // \p{N}
	classSpace                       // \s (Unicode White_Space)
	classUpperish                    // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] in o200k
	classLowerish                    // [\p{Ll}\p{Lm}\p{Lo}\p{M}] in o200k
	classLineBreak                   // [\r\n]
)

// classOther is a rune that is neither letter, number nor space: the class
// [^\s\p{L}\p{N}] of the punctuation alternatives.
const classOther uint8 = 0

// bmpClasses holds the class of every rune of the Basic Multilingual Plane,
// so the scanner does one load per rune instead of walking Unicode tables.
var (
	bmpClasses     [0x10000]uint8
	bmpClassesOnce sync.Once
)

func initClasses() {
	bmpClassesOnce.Do(func() {
		for r := range rune(0x10000) {
			bmpClasses[r] = computeClass(r)
		}
	})
}

func computeClass(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= classLetter
	}
	if unicode.IsNumber(r) {
		c |= classNumber
	}
	if unicode.IsSpace(r) {
		c |= classSpace
	}
	mark := unicode.IsMark(r)
	if mark || unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo) {
		c |= classUpperish
	}
	if mark || unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo) {
		c |= classLowerish
	}
	if r == '\r' || r == '\n' {
		c |= classLineBreak
	}
	return c
}

// classAt decodes the rune at s[i] and returns its class and width.
// Invalid UTF-8 is one byte of class other, as U+FFFD would be.
func classAt(s string, i int) (uint8, int) {
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
func lastClass(s string, end int) (uint8, int) {
	r, size := utf8.DecodeLastRuneInString(s[:end])
	if r < 0x10000 {
		return bmpClasses[r], size
	}
	return computeClass(r), size
}

// runEnd returns the end of the run of runes starting at i that have any of
// the bits in want.
func runEnd(s string, i int, want uint8) int {
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

package bpe

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"
)

// regexPieces splits text with the reference regex run by a backtracking
// engine, the specification the scanners implement.
func regexPieces(t testing.TB, re *regexp2.Regexp, text string) []string {
	t.Helper()
	var pieces []string
	m, err := re.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		pieces = append(pieces, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return pieces
}

func scannerPieces(p Pattern, text string) []string {
	var pieces []string
	p.Split(text, func(piece string) { pieces = append(pieces, piece) })
	return pieces
}

var allPatterns = []Pattern{PatternGPT2, PatternCL100K, PatternO200K, PatternQwen2}

func compileReference(t testing.TB, p Pattern) *regexp2.Regexp {
	t.Helper()
	re, err := regexp2.Compile(p.Regex(), regexp2.None)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

// comparable reports whether regexp2 can serve as the reference for text:
// it folds case with unicode.ToLower, which does not take ſ to s as the
// Unicode simple case folding of the reference engines does (that case is
// covered by the golden encodings instead).
func comparable(text string) bool { return !strings.ContainsRune(text, 'ſ') }

func TestScannerMatchesRegex(t *testing.T) {
	t.Parallel()
	texts := map[string]string{
		"contractions":      "I'm you'll it's they'd we've I'D YOU'LL 'x '",
		"space before word": " a  b   c",
		"trailing spaces":   "word   ",
		"lines":             "a\n\nb\r\n\r\n  c \n d",
		"numbers":           "1 12 123 1234 12345 ٣٤٥ ² ½ Ⅻ",
		"punctuation":       "a...b !? ?! /path/to//x \n/\n",
		"marks":             "e\u0301 \u0301 \u0301a ा हिन्दी",
		"case runs":         "CamelCase HTTPServer iPhone ǅungla ʰʲ ALLCAPS's DON'T",
		"unicode spaces":    "a\u00a0b\u3000c\u2028d\u0085e\ufefff",
		"emoji":             "😀 👍🏽 👨‍👩‍👧 🇫🇷",
		"cjk":               "中文，日本語。한국어",
		"lone space at end": "x ",
		"only spaces":       "   ",
	}
	for name, text := range texts {
		for _, p := range allPatterns {
			t.Run(name+"/"+p.String(), func(t *testing.T) {
				t.Parallel()
				want := regexPieces(t, compileReference(t, p), text)
				if diff := cmp.Diff(want, scannerPieces(p, text)); diff != "" {
					t.Errorf("pieces (-regex +scanner):\n%s", diff)
				}
			})
		}
	}
}

// FuzzScannerMatchesRegex checks every scanner against the regex it
// implements on arbitrary valid UTF-8.
func FuzzScannerMatchesRegex(f *testing.F) {
	for _, seed := range []string{"Hello, world!", "  a\n\n b", "I'LL 123456 ½", "e\u0301ǅʰ/\n/x", "😀 中文"} {
		f.Add(seed)
	}
	for _, text := range readJSON[[]string](f, "corpus.json") {
		f.Add(text)
	}
	refs := make(map[Pattern]*regexp2.Regexp)
	for _, p := range allPatterns {
		refs[p] = compileReference(f, p)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) || !comparable(text) {
			t.Skip("the reference regexes run on valid text without ſ")
		}
		for _, p := range allPatterns {
			want := regexPieces(t, refs[p], text)
			if diff := cmp.Diff(want, scannerPieces(p, text)); diff != "" {
				t.Errorf("%v on %q: pieces (-regex +scanner):\n%s", p, text, diff)
			}
		}
	})
}

// deepSeekV3Pieces splits text as DeepSeek-V3's pre-tokenizer specifies:
// each regex, run by a backtracking engine, splits every piece of the one
// before, keeping matches and the text between them.
func deepSeekV3Pieces(t testing.TB, text string) []string {
	t.Helper()
	pieces := []string{text}
	for _, src := range deepSeekV3Regexes {
		re, err := regexp2.Compile(src, regexp2.None)
		if err != nil {
			t.Fatal(err)
		}
		var next []string
		for _, piece := range pieces {
			at := 0
			runes := []rune(piece)
			m, err := re.FindStringMatch(piece)
			for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
				if m.Index > at {
					next = append(next, string(runes[at:m.Index]))
				}
				next = append(next, m.String())
				at = m.Index + m.Length
			}
			if err != nil {
				t.Fatal(err)
			}
			if at < len(runes) {
				next = append(next, string(runes[at:]))
			}
		}
		pieces = next
	}
	return pieces
}

func TestDeepSeekV3ScannerMatchesRegexes(t *testing.T) {
	t.Parallel()
	texts := map[string]string{
		"words and numbers":  "In 2024, 12345 people paid $1,000.50 each; x=42y",
		"ascii punctuation":  "'s don't .NET #include <stdio.h> a_b C++ e-mail",
		"spaces":             "a  b   c \n\n  d\t\te   ",
		"lines":              "x\r\n\r\n  y \n z\n",
		"cjk":                "中文和日本語のテキスト、カタカナ・ひらがな゛。한국어 텍스트",
		"cjk then spaces":    "中文   中文 x  12  ",
		"marks and symbols":  "e\u0301 \u0301 \u0301a ा हिन्दी ≤≥ €5 © ™",
		"controls and emoji": "a\u0001b \u200d😀 👍🏽 \u0000 \ufeffz",
		"unicode spaces":     "a\u00a0b\u3000c\u2028d\u0085e",
		"digits in scripts":  "٣٤٥٦ ²³ ½ Ⅻ 〇一二",
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := deepSeekV3Pieces(t, text)
			if diff := cmp.Diff(want, scannerPieces(PatternDeepSeekV3, text)); diff != "" {
				t.Errorf("pieces (-regexes +scanner):\n%s", diff)
			}
		})
	}
}

// FuzzDeepSeekV3Scanner checks the DeepSeek-V3 scanner against its chain
// of regexes on arbitrary valid UTF-8.
func FuzzDeepSeekV3Scanner(f *testing.F) {
	for _, seed := range []string{"Hello, world 12345!", "  a\n\n b", "中文カ・タ x", "e\u0301/\n/x", "😀 \u0001 ½"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			t.Skip("the reference regexes run on valid text")
		}
		if diff := cmp.Diff(deepSeekV3Pieces(t, text), scannerPieces(PatternDeepSeekV3, text)); diff != "" {
			t.Errorf("on %q: pieces (-regexes +scanner):\n%s", text, diff)
		}
	})
}

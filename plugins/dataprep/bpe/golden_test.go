package bpe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The golden files hold the ids the reference implementations give for
// testdata/golden/corpus.json; testdata/golden/regen.sh regenerates them.

func readJSON[T any](t testing.TB, name string) T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

var vocabCache sync.Map

// loadVocab opens a test vocabulary once per test binary.
func loadVocab(t testing.TB, file string, kind Kind) *Tokenizer {
	t.Helper()
	if v, ok := vocabCache.Load(file); ok {
		return v.(*Tokenizer)
	}
	tok, err := Open(filepath.Join("testdata", "vocab", file), kind, "")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := vocabCache.LoadOrStore(file, tok)
	return v.(*Tokenizer)
}

func TestGoldenEncodings(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		vocab   string
		kind    Kind
		golden  string
		special bool
	}{
		"r50k_base ordinary":      {vocab: "r50k_base.tiktoken.gz", kind: KindTiktoken, golden: "r50k_base.ordinary.json"},
		"r50k_base special":       {vocab: "r50k_base.tiktoken.gz", kind: KindTiktoken, golden: "r50k_base.special.json", special: true},
		"cl100k_base ordinary":    {vocab: "cl100k_base.tiktoken.gz", kind: KindTiktoken, golden: "cl100k_base.ordinary.json"},
		"cl100k_base special":     {vocab: "cl100k_base.tiktoken.gz", kind: KindTiktoken, golden: "cl100k_base.special.json", special: true},
		"o200k_base ordinary":     {vocab: "o200k_base.tiktoken.gz", kind: KindTiktoken, golden: "o200k_base.ordinary.json"},
		"o200k_base special":      {vocab: "o200k_base.tiktoken.gz", kind: KindTiktoken, golden: "o200k_base.special.json", special: true},
		"gpt4o tokenizer.json hf": {vocab: "gpt4o.tokenizer.json.gz", kind: KindHF, golden: "gpt4o.hf.json", special: true},
	}
	corpus := readJSON[[]string](t, "corpus.json")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tok := loadVocab(t, tc.vocab, tc.kind)
			want := readJSON[[][]uint32](t, tc.golden)
			if len(want) != len(corpus) {
				t.Fatalf("golden has %d encodings for %d texts; run testdata/golden/regen.sh", len(want), len(corpus))
			}
			enc := tok.NewEncoder()
			for k, text := range corpus {
				var got []uint32
				if tc.special {
					got = enc.EncodeSpecial(nil, text)
				} else {
					got = enc.Encode(nil, text)
				}
				if diff := cmp.Diff(want[k], got, cmpEmptyIsNil); diff != "" {
					t.Errorf("text %d %q: ids (-reference +got):\n%s", k, text, diff)
				}
				checkRoundTrip(t, tok, text, got)
			}
		})
	}
}

var cmpEmptyIsNil = cmp.FilterValues(func(x, y []uint32) bool { return len(x) == 0 && len(y) == 0 }, cmp.Ignore())

func checkRoundTrip(t *testing.T, tok *Tokenizer, text string, ids []uint32) {
	t.Helper()
	back, err := tok.Decode(ids)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != text {
		t.Errorf("decode(encode(%q)) = %q", text, back)
	}
}

package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHeapMergeEqualsLinear checks that the heap merge used for long pieces
// joins pairs in the same order as the linear merge on random pieces.
func TestHeapMergeEqualsLinear(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		vocab string
		kind  Kind
	}{
		"cl100k_base tiktoken": {vocab: "cl100k_base.tiktoken.gz", kind: KindTiktoken},
		"gpt4o hf":             {vocab: "gpt4o.tokenizer.json.gz", kind: KindHF},
	}
	alphabet := []string{"a", "b", "e", "t", "h", " ", "  ", "\n", "0", "1", "=", "é", "中", "😀", "ab", "the"}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			enc := loadVocab(t, tc.vocab, tc.kind).NewEncoder()
			rng := rand.New(rand.NewPCG(1, 2))
			for range 300 {
				var b strings.Builder
				for b.Len() < 4+rng.IntN(300) {
					b.WriteString(alphabet[rng.IntN(len(alphabet))])
				}
				piece := b.String()
				linear := enc.mergeLinear(nil, slices.Clone(enc.symbols(piece)))
				heap := enc.mergeHeap(nil, slices.Clone(enc.symbols(piece)))
				if diff := cmp.Diff(linear, heap); diff != "" {
					t.Fatalf("piece %q (-linear +heap):\n%s", piece, diff)
				}
			}
		})
	}
}

func TestEncodeLongPieces(t *testing.T) {
	t.Parallel()
	tok := loadVocab(t, "cl100k_base.tiktoken.gz", KindTiktoken)
	for name, text := range map[string]string{
		"spaces":  strings.Repeat(" ", 100000) + "x",
		"letters": strings.Repeat("ab", 50000),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ids := tok.NewEncoder().Encode(nil, text)
			checkRoundTrip(t, tok, text, ids)
		})
	}
}

func TestSpecialTokens(t *testing.T) {
	t.Parallel()
	tok := loadVocab(t, "cl100k_base.tiktoken.gz", KindTiktoken)
	eot, ok := tok.SpecialID("<|endoftext|>")
	if !ok || eot != 100257 {
		t.Fatalf("SpecialID(<|endoftext|>) = %d, %v; want 100257", eot, ok)
	}
	enc := tok.NewEncoder()
	text := "a<|endoftext|>b"
	special := enc.EncodeSpecial(nil, text)
	ordinary := enc.Encode(nil, text)
	if diff := cmp.Diff([]uint32{64, eot, 65}, special); diff != "" {
		t.Errorf("EncodeSpecial (-want +got):\n%s", diff)
	}
	for _, id := range ordinary {
		if id == eot {
			t.Errorf("Encode turned special-token text into the special token: %v", ordinary)
		}
	}
	if got, want := tok.DefaultEOS(), "<|endoftext|>"; got != want {
		t.Errorf("DefaultEOS = %q, want %q", got, want)
	}
	if got, want := tok.VocabSize(), 100277; got != want {
		t.Errorf("VocabSize = %d, want %d", got, want)
	}
}

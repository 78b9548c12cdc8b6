package bpe

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReadTiktoken reads a tiktoken rank file: one "base64-token rank" line per
// token, the rank being both the token's id and its merge priority. The
// file does not say its pattern or special tokens, so encoding names a
// preset (see PresetNames); "" picks the preset by the number of ranks.
func ReadTiktoken(r io.Reader, encoding string) (*Tokenizer, error) {
	tokens, err := readRanks(r)
	if err != nil {
		return nil, err
	}
	p, ok := presetByName(encoding)
	if encoding == "" {
		p, ok = presetByRanks(len(tokens))
		if !ok {
			return nil, fmt.Errorf("a rank file of %d tokens matches no known encoding; name one of %s", len(tokens), strings.Join(PresetNames(), ", "))
		}
	}
	if !ok {
		return nil, fmt.Errorf("unknown tiktoken encoding %q; known: %s", encoding, strings.Join(PresetNames(), ", "))
	}
	return newTokenizer(vocabulary{
		pattern:    p.pattern,
		tokens:     tokens,
		merges:     mergesFromRanks(tokens),
		wholeFirst: true,
		specials:   p.specials,
		bos:        p.bos,
		eos:        p.eos,
	})
}

func readRanks(r io.Reader) (map[string]uint32, error) {
	tokens := make(map[string]uint32, 1<<17)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	seen := make(map[uint32]int)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" {
			continue
		}
		b64, rankText, ok := strings.Cut(text, " ")
		if !ok {
			return nil, fmt.Errorf("line %d: want \"base64-token rank\", got %q", line, text)
		}
		token, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("line %d: token is not base64: %v", line, err)
		}
		rank, err := strconv.ParseUint(rankText, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: rank %q is not a number", line, rankText)
		}
		if first, dup := seen[uint32(rank)]; dup {
			return nil, fmt.Errorf("line %d: rank %d already given on line %d", line, rank, first)
		}
		if _, dup := tokens[string(token)]; dup {
			return nil, fmt.Errorf("line %d: token %q listed twice", line, token)
		}
		seen[uint32(rank)] = line
		tokens[string(token)] = uint32(rank)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("rank file holds no tokens")
	}
	return tokens, nil
}

// mergesFromRanks derives pair merges from ranks: tiktoken joins two adjacent
// tokens whenever their concatenation is a token, lowest rank first, so every
// split of a token into two tokens is a merge with the token's rank.
func mergesFromRanks(tokens map[string]uint32) map[uint64]merge {
	merges := make(map[uint64]merge, 3*len(tokens))
	for text, id := range tokens {
		for k := 1; k < len(text); k++ {
			left, okL := tokens[text[:k]]
			right, okR := tokens[text[k:]]
			if okL && okR {
				merges[pairKey(left, right)] = merge{rank: id, id: id}
			}
		}
	}
	return merges
}

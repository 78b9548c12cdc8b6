package pipeline

import (
	"fmt"
	"path/filepath"

	"github.com/gpuflow/gpuflow/plugins/dataprep/shard"
)

// group is the shard group being filled: the documents of each split, in
// input order, until the group holds ShardTokens tokens.
type group struct {
	index int
	docs  [][][]uint32 // by split index
	// masks holds each document's loss mask, for chat records only.
	masks     [][][]uint8
	documents int64
	tokens    int64
	skipped   int64
}

func newGroup(index, splits int) *group {
	return &group{index: index, docs: make([][][]uint32, splits), masks: make([][][]uint8, splits)}
}

func (g *group) add(split int, doc []uint32, mask []uint8) {
	g.docs[split] = append(g.docs[split], doc)
	if mask != nil {
		g.masks[split] = append(g.masks[split], mask)
	}
	g.documents++
	g.tokens += int64(len(doc))
}

// write writes one shard per split that received documents and per format.
func (g *group) write(cfg *Config, names []string) (Group, error) {
	out := Group{Index: g.index, Skipped: g.skipped, Splits: make(map[string]SplitShard)}
	for k, docs := range g.docs {
		if len(docs) == 0 {
			continue
		}
		order := g.order(cfg, k, len(docs))
		name := fmt.Sprintf("%s_%05d", names[k], g.index)
		s, err := writeSplit(cfg, name, docs, order)
		if err != nil {
			return Group{}, err
		}
		if cfg.Chat != nil {
			if err := writeMasks(cfg, name, g.masks[k], order, &s); err != nil {
				return Group{}, err
			}
		}
		out.Splits[names[k]] = s
	}
	return out, nil
}

// order is the order documents are written in: input order, or a shuffle
// seeded by the seed, the group and the split.
func (g *group) order(cfg *Config, split, n int) []int {
	if !cfg.Shuffle {
		return permutationIdentity(n)
	}
	return permutation(n, mix(cfg.Seed^mix(uint64(g.index)<<8|uint64(split))))
}

func permutationIdentity(n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	return order
}

func writeSplit(cfg *Config, name string, docs [][]uint32, order []int) (SplitShard, error) {
	s := SplitShard{Documents: int64(len(docs))}
	for _, d := range docs {
		s.Tokens += int64(len(d))
	}
	vocab := cfg.Tokenizer.VocabSize()
	for _, format := range cfg.Formats {
		switch format {
		case FormatMegatron:
			w, err := shard.CreateMegatron(filepath.Join(cfg.OutputDir, name), shard.MegatronDType(vocab))
			if err != nil {
				return s, err
			}
			if err := addAll(w.Add, w.Abort, docs, order); err != nil {
				return s, err
			}
			s.Bytes += w.Bytes()
			if err := w.Commit(); err != nil {
				return s, err
			}
			s.Megatron = name
		case FormatNpy:
			w, err := shard.CreateNpy(filepath.Join(cfg.OutputDir, name+".npy"), shard.NpyDType(vocab))
			if err != nil {
				return s, err
			}
			if err := addAll(w.Add, w.Abort, docs, order); err != nil {
				return s, err
			}
			s.Bytes += w.Bytes()
			if err := w.Commit(); err != nil {
				return s, err
			}
			s.Npy = name + ".npy"
		}
	}
	return s, nil
}

func addAll(add func([]uint32) error, abort func(), docs [][]uint32, order []int) error {
	for _, k := range order {
		if err := add(docs[k]); err != nil {
			abort()
			return err
		}
	}
	return nil
}

// writeMasks writes the loss masks of a split's documents beside its
// shards, in the same order and format: NAME.mask.bin/.idx, a Megatron
// indexed dataset of uint8 whose sizes are the token shard's, and
// NAME.mask.npy.
func writeMasks(cfg *Config, name string, masks [][]uint8, order []int, s *SplitShard) error {
	for _, m := range masks {
		for _, v := range m {
			s.TrainedTokens += int64(v)
		}
	}
	for _, format := range cfg.Formats {
		switch format {
		case FormatMegatron:
			w, err := shard.CreateMegatron(filepath.Join(cfg.OutputDir, name+MaskSuffix), shard.Uint8)
			if err != nil {
				return err
			}
			if err := addMasks(w.Add, w.Abort, masks, order); err != nil {
				return err
			}
			s.Bytes += w.Bytes()
			if err := w.Commit(); err != nil {
				return err
			}
			s.MegatronMask = name + MaskSuffix
		case FormatNpy:
			w, err := shard.CreateNpy(filepath.Join(cfg.OutputDir, name+NpyMaskSuffix), shard.Uint8)
			if err != nil {
				return err
			}
			if err := addMasks(w.Add, w.Abort, masks, order); err != nil {
				return err
			}
			s.Bytes += w.Bytes()
			if err := w.Commit(); err != nil {
				return err
			}
			s.NpyMask = name + NpyMaskSuffix
		}
	}
	return nil
}

func addMasks(add func([]uint32) error, abort func(), masks [][]uint8, order []int) error {
	var buf []uint32
	for _, k := range order {
		buf = buf[:0]
		for _, v := range masks[k] {
			buf = append(buf, uint32(v))
		}
		if err := add(buf); err != nil {
			abort()
			return err
		}
	}
	return nil
}

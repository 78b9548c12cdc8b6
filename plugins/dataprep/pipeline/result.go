package pipeline

import (
	"maps"
	"path/filepath"
	"slices"
)

// Result sums up an output folder.
type Result struct {
	// Splits holds every split named in the configuration, even one that
	// received no document.
	Splits                            map[string]*SplitResult
	Documents, Tokens, Bytes, Skipped int64
	// TrainedTokens counts the tokens loss masks mark trained (chat
	// records only).
	TrainedTokens int64
	Groups        int
	// Resumed is the number of groups found finished from an earlier run.
	Resumed int
}

// SplitResult is one split's shards, with absolute paths: Megatron prefixes
// (what --data-path takes) and .npy files, in group order.
type SplitResult struct {
	Megatron []string
	Npy      []string
	// Masks are the loss masks' Megatron prefixes, beside Megatron's.
	Masks                    []string
	Documents, Tokens, Bytes int64
	TrainedTokens            int64
}

func newResult(m *Manifest, dir string, splits []string, resumed int) *Result {
	r := &Result{Splits: make(map[string]*SplitResult), Groups: len(m.Groups), Resumed: resumed}
	for _, name := range splits {
		r.Splits[name] = &SplitResult{}
	}
	for _, g := range m.Groups {
		r.Skipped += g.Skipped
		for _, name := range slices.Sorted(maps.Keys(g.Splits)) {
			s, out := g.Splits[name], r.Splits[name]
			if out == nil {
				out = &SplitResult{}
				r.Splits[name] = out
			}
			if s.Megatron != "" {
				out.Megatron = append(out.Megatron, filepath.Join(dir, s.Megatron))
			}
			if s.Npy != "" {
				out.Npy = append(out.Npy, filepath.Join(dir, s.Npy))
			}
			if s.MegatronMask != "" {
				out.Masks = append(out.Masks, filepath.Join(dir, s.MegatronMask))
			}
			out.TrainedTokens += s.TrainedTokens
			r.TrainedTokens += s.TrainedTokens
			out.Documents += s.Documents
			out.Tokens += s.Tokens
			out.Bytes += s.Bytes
			r.Documents += s.Documents
			r.Tokens += s.Tokens
			r.Bytes += s.Bytes
		}
	}
	return r
}

package pipeline

import (
	"maps"
	"math/bits"
	"slices"
)

// mix is SplitMix64's finaliser: a fixed, well-spread hash of x, so that
// assignments and shuffles do not depend on Go's random number generators.
func mix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// splitter assigns each document to a split by a hash of the seed and its
// record number, so the assignment is the same whatever order documents are
// tokenized in.
type splitter struct {
	names []string // sorted
	upper []float64
}

func newSplitter(splits map[string]float64) splitter {
	s := splitter{names: slices.Sorted(maps.Keys(splits))}
	cum := 0.0
	for _, n := range s.names {
		cum += splits[n]
		s.upper = append(s.upper, cum)
	}
	return s
}

// assign returns the index of the split of record number record.
func (s splitter) assign(seed uint64, record int64) int {
	u := float64(mix(seed^mix(uint64(record)))>>11) / (1 << 53)
	last := 0
	for k, upper := range s.upper {
		if u < upper {
			return k
		}
		if k == 0 || upper > s.upper[k-1] {
			last = k
		}
	}
	return last // rounding left u above the sum: the last split with a share
}

// permutation returns 0..n-1 shuffled by a Fisher-Yates shuffle driven by a
// SplitMix64 stream seeded with key.
func permutation(n int, key uint64) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	state := key
	for k := n - 1; k > 0; k-- {
		state += 0x9E3779B97F4A7C15
		hi, _ := bits.Mul64(mix(state), uint64(k+1))
		j := int(hi)
		order[k], order[j] = order[j], order[k]
	}
	return order
}

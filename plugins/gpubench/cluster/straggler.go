package cluster

import (
	"cmp"
	"slices"

	"github.com/gpuflow/gpuflow/plugins/api/stats"
)

// DefaultMaxStragglerRatio is how much slower than the median a rank may
// be when the stage sets no max_straggler_ratio.
const DefaultMaxStragglerRatio = 1.1

// Straggler is a rank slower than the median of all ranks for one
// collective at one size.
type Straggler struct {
	Op      string `json:"op"`
	Bytes   int64  `json:"bytes"`
	InPlace bool   `json:"in_place"`
	Node    int    `json:"node"`
	GPU     int    `json:"gpu"`
	// Rank is the global rank: node × GPUs per node + GPU.
	Rank    int     `json:"rank"`
	TimeS   float64 `json:"time_s"`
	MedianS float64 `json:"median_s"`
	// Ratio is TimeS / MedianS.
	Ratio float64 `json:"ratio"`
}

type collectiveKey struct {
	op      string
	bytes   int64
	inPlace bool
}

type rankTime struct {
	node, gpu, rank int
	seconds         float64
}

// Stragglers compares, for each collective and size, every rank's time
// with the median over all ranks of all nodes and returns the ranks slower
// than maxRatio × median, slowest first within each collective, the
// collectives in node 0's order.
func Stragglers(nodes []NodeTimes, maxRatio float64) []Straggler {
	groups, order := groupTimes(nodes)
	var out []Straggler
	for _, k := range order {
		ranks := groups[k]
		times := make([]float64, len(ranks))
		for i, r := range ranks {
			times[i] = r.seconds
		}
		med := stats.Median(times)
		if med <= 0 {
			continue
		}
		var slow []Straggler
		for _, r := range ranks {
			if r.seconds > maxRatio*med {
				slow = append(slow, Straggler{Op: k.op, Bytes: k.bytes, InPlace: k.inPlace, Node: r.node, GPU: r.gpu,
					Rank: r.rank, TimeS: r.seconds, MedianS: med, Ratio: r.seconds / med})
			}
		}
		slices.SortStableFunc(slow, func(a, b Straggler) int { return cmp.Compare(b.Ratio, a.Ratio) })
		out = append(out, slow...)
	}
	return out
}

// groupTimes gathers every rank's time by collective, numbering ranks as
// NCCL does: the GPUs of node 0 first.
func groupTimes(nodes []NodeTimes) (map[collectiveKey][]rankTime, []collectiveKey) {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b NodeTimes) int { return cmp.Compare(a.Node, b.Node) })
	groups := map[collectiveKey][]rankTime{}
	var order []collectiveKey
	for _, n := range sorted {
		for _, c := range n.Collectives {
			k := collectiveKey{c.Op, c.Bytes, c.InPlace}
			if _, seen := groups[k]; !seen {
				order = append(order, k)
				groups[k] = nil
			}
			for gpu, s := range c.RankTimesS {
				groups[k] = append(groups[k], rankTime{node: n.Node, gpu: gpu, rank: n.Node*len(c.RankTimesS) + gpu, seconds: s})
			}
		}
	}
	return groups, order
}

package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStragglers(t *testing.T) {
	t.Parallel()
	ar := func(bytes int64, inPlace bool, times ...float64) CollectiveTimes {
		return CollectiveTimes{Op: "all_reduce", Bytes: bytes, InPlace: inPlace, RankTimesS: times}
	}
	tests := map[string]struct {
		nodes    []NodeTimes
		maxRatio float64
		want     []Straggler
	}{
		"even ranks": {
			nodes:    []NodeTimes{{Node: 0, Collectives: []CollectiveTimes{ar(1024, false, 1, 1.05)}}, {Node: 1, Collectives: []CollectiveTimes{ar(1024, false, 1, 1.02)}}},
			maxRatio: 1.1,
		},
		"one slow GPU on node 1": {
			nodes:    []NodeTimes{{Node: 0, Collectives: []CollectiveTimes{ar(1024, false, 1, 1)}}, {Node: 1, Collectives: []CollectiveTimes{ar(1024, false, 1, 1.5)}}},
			maxRatio: 1.1,
			want:     []Straggler{{Op: "all_reduce", Bytes: 1024, Node: 1, GPU: 1, Rank: 3, TimeS: 1.5, MedianS: 1, Ratio: 1.5}},
		},
		"nodes out of order, sizes apart, exactly at the ratio passes": {
			nodes: []NodeTimes{
				{Node: 1, Collectives: []CollectiveTimes{ar(1024, false, 2, 4), ar(4096, true, 2, 2)}},
				{Node: 0, Collectives: []CollectiveTimes{ar(1024, false, 3, 2), ar(4096, true, 2, 3)}},
			},
			maxRatio: 1.2,
			want: []Straggler{
				{Op: "all_reduce", Bytes: 1024, Node: 1, GPU: 1, Rank: 3, TimeS: 4, MedianS: 2.5, Ratio: 1.6},
				{Op: "all_reduce", Bytes: 4096, InPlace: true, Node: 0, GPU: 1, Rank: 1, TimeS: 3, MedianS: 2, Ratio: 1.5},
			},
		},
		"odd rank count takes the middle": {
			nodes:    []NodeTimes{{Node: 0, Collectives: []CollectiveTimes{ar(8, false, 1, 2, 10)}}},
			maxRatio: 1.1,
			want:     []Straggler{{Op: "all_reduce", Bytes: 8, Node: 0, GPU: 2, Rank: 2, TimeS: 10, MedianS: 2, Ratio: 5}},
		},
		"no times": {nodes: []NodeTimes{{Node: 0, Collectives: []CollectiveTimes{ar(8, false)}}, {Node: 1}}, maxRatio: 1.1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, Stragglers(tc.nodes, tc.maxRatio)); diff != "" {
				t.Errorf("stragglers (-want +got):\n%s", diff)
			}
		})
	}
}

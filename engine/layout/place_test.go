package layout

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/hardware"
)

// Test machines, shaped like the built-in profiles they are named after.
func hgx(nodes int) *hardware.Profile {
	return &hardware.Profile{Name: "hgx", Nodes: nodes,
		GPU:          hardware.GPU{Model: "H100", PerNode: 8, TFLOPS: map[string]float64{"bf16": 989, "fp8": 1979}},
		Interconnect: hardware.Interconnect{Kind: "nvlink4", DomainSize: 8}}
}

func nvl72(nodes int) *hardware.Profile {
	return &hardware.Profile{Name: "nvl72", Nodes: nodes,
		GPU:          hardware.GPU{Model: "B200", PerNode: 4, TFLOPS: map[string]float64{"bf16": 2250, "fp8": 4500}},
		Interconnect: hardware.Interconnect{Kind: "nvlink5", DomainSize: 72}}
}

func pcieBox() *hardware.Profile {
	return &hardware.Profile{Name: "pcie", Nodes: 1,
		GPU:          hardware.GPU{Model: "A10", PerNode: 4, TFLOPS: map[string]float64{"bf16": 125}},
		Interconnect: hardware.Interconnect{Kind: "pcie"}}
}

func TestPlaceGroups(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		l    Layout
		hw   *hardware.Profile
		want []Group
	}{
		"llama 70B recipe on 8 HGX nodes": {
			l:  Layout{TP: 4, CP: 2, DP: 2, PP: 4},
			hw: hgx(8),
			want: []Group{
				{Kind: "tp", Size: 4, Count: 16, Link: "nvlink", NodesSpanned: 1},
				{Kind: "cp", Size: 2, Count: 32, Link: "nvlink", NodesSpanned: 1},
				{Kind: "dp", Size: 2, Count: 32, Link: "network", NodesSpanned: 2},
				{Kind: "pp", Size: 4, Count: 16, Link: "network", NodesSpanned: 4},
			},
		},
		"single GPU": {
			l:  Layout{TP: 1, CP: 1, DP: 1, PP: 1},
			hw: hgx(1),
			want: []Group{
				{Kind: "tp", Size: 1, Count: 1, Link: "none", NodesSpanned: 1},
				{Kind: "cp", Size: 1, Count: 1, Link: "none", NodesSpanned: 1},
				{Kind: "dp", Size: 1, Count: 1, Link: "none", NodesSpanned: 1},
				{Kind: "pp", Size: 1, Count: 1, Link: "none", NodesSpanned: 1},
			},
		},
		"nvl72 keeps a whole rack on nvlink across 18 nodes": {
			l:  Layout{TP: 8, CP: 1, DP: 9, PP: 1},
			hw: nvl72(18),
			want: []Group{
				{Kind: "tp", Size: 8, Count: 9, Link: "nvlink", NodesSpanned: 2},
				{Kind: "cp", Size: 1, Count: 72, Link: "none", NodesSpanned: 1},
				{Kind: "dp", Size: 9, Count: 8, Link: "nvlink", NodesSpanned: 9},
				{Kind: "pp", Size: 1, Count: 72, Link: "none", NodesSpanned: 1},
			},
		},
		"nvl72 dp across two racks goes over the network": {
			l:  Layout{TP: 8, CP: 1, DP: 18, PP: 1},
			hw: nvl72(36),
			want: []Group{
				{Kind: "tp", Size: 8, Count: 18, Link: "nvlink", NodesSpanned: 2},
				{Kind: "cp", Size: 1, Count: 144, Link: "none", NodesSpanned: 1},
				{Kind: "dp", Size: 18, Count: 8, Link: "network", NodesSpanned: 18},
				{Kind: "pp", Size: 1, Count: 144, Link: "none", NodesSpanned: 1},
			},
		},
		"no nvlink inside a node means pcie": {
			l:  Layout{TP: 2, CP: 1, DP: 2, PP: 1},
			hw: pcieBox(),
			want: []Group{
				{Kind: "tp", Size: 2, Count: 2, Link: "pcie", NodesSpanned: 1},
				{Kind: "cp", Size: 1, Count: 4, Link: "none", NodesSpanned: 1},
				{Kind: "dp", Size: 2, Count: 2, Link: "pcie", NodesSpanned: 1},
				{Kind: "pp", Size: 1, Count: 4, Link: "none", NodesSpanned: 1},
			},
		},
		"tp not dividing the node straddles nodes": {
			l:  Layout{TP: 3, CP: 1, DP: 1, PP: 1},
			hw: &hardware.Profile{Nodes: 2, GPU: hardware.GPU{PerNode: 2}, Interconnect: hardware.Interconnect{DomainSize: 2}},
			want: []Group{
				{Kind: "tp", Size: 3, Count: 1, Link: "network", NodesSpanned: 2},
				{Kind: "cp", Size: 1, Count: 3, Link: "none", NodesSpanned: 1},
				{Kind: "dp", Size: 1, Count: 3, Link: "none", NodesSpanned: 1},
				{Kind: "pp", Size: 1, Count: 3, Link: "none", NodesSpanned: 1},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := Place(tc.l, tc.hw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, p.Groups); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if len(p.Ranks) != tc.l.WorldSize() {
				t.Errorf("got %d ranks, want %d", len(p.Ranks), tc.l.WorldSize())
			}
		})
	}
}

func TestPlaceRanksFollowMegatronOrder(t *testing.T) {
	t.Parallel()
	p, err := Place(Layout{TP: 2, CP: 1, DP: 2, PP: 2}, &hardware.Profile{Nodes: 2, GPU: hardware.GPU{PerNode: 4}, Interconnect: hardware.Interconnect{DomainSize: 4}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Rank{
		{Rank: 0, Node: 0, GPU: 0, TP: 0, DP: 0, PP: 0},
		{Rank: 1, Node: 0, GPU: 1, TP: 1, DP: 0, PP: 0},
		{Rank: 2, Node: 0, GPU: 2, TP: 0, DP: 1, PP: 0},
		{Rank: 3, Node: 0, GPU: 3, TP: 1, DP: 1, PP: 0},
		{Rank: 4, Node: 1, GPU: 0, TP: 0, DP: 0, PP: 1},
		{Rank: 5, Node: 1, GPU: 1, TP: 1, DP: 0, PP: 1},
		{Rank: 6, Node: 1, GPU: 2, TP: 0, DP: 1, PP: 1},
		{Rank: 7, Node: 1, GPU: 3, TP: 1, DP: 1, PP: 1},
	}
	if diff := cmp.Diff(want, p.Ranks); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}
	wantSummary := "8 ranks on 2 nodes x 4 GPUs: tp 2 nvlink, cp 1 none, dp 2 nvlink, pp 2 network (2 nodes)"
	if p.Summary != wantSummary {
		t.Errorf("summary = %q, want %q", p.Summary, wantSummary)
	}
}

func TestPlaceRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		l    Layout
		hw   *hardware.Profile
		want string
	}{
		"more ranks than GPUs": {Layout{TP: 8, CP: 1, DP: 4, PP: 1}, hgx(2), "needs 32 GPUs"},
		"zero degree":          {Layout{TP: 0, CP: 1, DP: 1, PP: 1}, hgx(1), "at least 1"},
		"no hardware":          {Layout{TP: 1, CP: 1, DP: 1, PP: 1}, nil, "no GPUs"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Place(tc.l, tc.hw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

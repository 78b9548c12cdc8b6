package plandiff

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/layout"
)

func TestCompareLayouts(t *testing.T) {
	t.Parallel()
	with := func(nodes int, edit func(l *layout.Layout)) trainSpec {
		s := base7b()
		s.nodes = nodes
		edit(&s.layout)
		return s
	}
	tests := map[string]struct {
		old, new    trainSpec
		wantChanges []string
		wantGroups  []string
		wantNotes   []string
	}{
		"TP crosses the NVLink domain": {
			old:         with(2, func(l *layout.Layout) { l.TP, l.DP = 8, 2 }),
			new:         with(2, func(l *layout.Layout) { l.TP, l.DP = 16, 1 }),
			wantChanges: []string{"tp 8 -> 16", "dp 2 -> 1"},
			wantGroups:  []string{"tp 8 nvlink 1 -> 16 network 2", "dp 2 network 2 -> 1 none 1"},
			wantNotes: []string{
				"TP now crosses the NVLink domain: its all-reduces, several per layer, run over the network (2 nodes)",
				"DP gradient traffic stops: dp is 1",
			},
		},
		"DP traffic moves to the network": {
			old:         with(1, func(l *layout.Layout) {}),
			new:         with(2, func(l *layout.Layout) { l.DP = 8 }),
			wantChanges: []string{"dp 4 -> 8"},
			wantGroups:  []string{"dp 4 nvlink 1 -> 8 network 2"},
			wantNotes:   []string{"DP gradient traffic moves to the network (2 nodes)"},
		},
		"DP traffic comes back onto NVLink": {
			old:         with(2, func(l *layout.Layout) { l.DP = 8 }),
			new:         with(1, func(l *layout.Layout) {}),
			wantChanges: []string{"dp 8 -> 4"},
			wantGroups:  []string{"dp 8 network 2 -> 4 nvlink 1"},
			wantNotes:   []string{"DP gradient traffic moves from network back to NVLink"},
		},
		"pipeline bubble appears": {
			old:         with(1, func(l *layout.Layout) { l.TP, l.DP = 2, 4 }),
			new:         with(1, func(l *layout.Layout) { l.TP, l.PP, l.DP = 2, 2, 2 }),
			wantChanges: []string{"pp 1 -> 2", "dp 4 -> 2"},
			wantGroups:  []string{"dp 4 nvlink 1 -> 2 nvlink 1", "pp 1 none 1 -> 2 nvlink 1"},
			// bubble (pp-1)/(vp*m) with m = 256/(1*2) = 128 micro-batches per step
			wantNotes: []string{"PP activation traffic now runs over NVLink", "pipeline bubble 0.0% -> 0.8% of compute"},
		},
		"micro batch only": {
			old:         with(1, func(l *layout.Layout) {}),
			new:         with(1, func(l *layout.Layout) { l.MicroBatch = 2 }),
			wantChanges: []string{"micro_batch 1 -> 2"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := compareLayouts(trainingStage(t, tc.old), trainingStage(t, tc.new))
			if got == nil {
				t.Fatal("no layout diff")
			}
			var changes, groups []string
			for _, c := range got.Changes {
				changes = append(changes, fmt.Sprintf("%s %s -> %s", c.Path, c.Old, c.New))
			}
			for _, g := range got.Groups {
				groups = append(groups, fmt.Sprintf("%s %d %s %d -> %d %s %d", g.Kind, g.OldSize, g.OldLink, g.OldNodesSpanned,
					g.NewSize, g.NewLink, g.NewNodesSpanned))
				if g.OldCommS == nil || g.NewCommS == nil {
					t.Errorf("group %s lacks the estimates' communication time", g.Kind)
				}
			}
			if diff := cmp.Diff(tc.wantChanges, changes); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantGroups, groups); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNotes, got.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareLayoutsWithoutLayout(t *testing.T) {
	t.Parallel()
	if got := compareLayouts(plainStage("data_prep.a", nil), plainStage("data_prep.a", nil)); got != nil {
		t.Errorf("stages without layouts: got %+v, want nil", got)
	}
	same := trainingStage(t, base7b())
	if got := compareLayouts(same, trainingStage(t, base7b())); got != nil {
		t.Errorf("same layout: got %+v, want nil", got)
	}
}

func TestGroupNotesWithinNVLink(t *testing.T) {
	t.Parallel()
	g := GroupChange{Kind: layout.KindTP, OldSize: 4, NewSize: 8, OldLink: layout.LinkNVLink, NewLink: layout.LinkNVLink, OldNodesSpanned: 1, NewNodesSpanned: 2}
	want := []string{"TP groups now span 2 nodes (was 1), still over NVLink"}
	if diff := cmp.Diff(want, groupNotes(g)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	g = GroupChange{Kind: layout.KindTP, OldSize: 2, NewSize: 4, OldLink: layout.LinkNVLink, NewLink: layout.LinkPCIe, OldNodesSpanned: 1, NewNodesSpanned: 1}
	want = []string{"TP all-reduce traffic moves from NVLink to PCIe"}
	if diff := cmp.Diff(want, groupNotes(g)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

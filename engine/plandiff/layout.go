package plandiff

import (
	"fmt"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
)

// Layout is how a stage's parallel layout and its placement change.
type Layout struct {
	// Changes are the layout's fields that differ ("tp", "micro_batch").
	Changes []Change `json:"changes,omitempty"`
	// Groups are the parallel kinds whose size, link or span changes.
	Groups []GroupChange `json:"groups,omitempty"`
	// Notes say what the change does on the hardware, in words.
	Notes []string `json:"notes,omitempty"`
}

// GroupChange is one parallel kind (tp, cp, dp, pp) placed before and
// after. Links are layout.LinkNone, LinkNVLink, LinkPCIe or LinkNetwork;
// the communication seconds per step come from the estimates.
type GroupChange struct {
	Kind            string   `json:"kind"`
	OldSize         int      `json:"old_size"`
	NewSize         int      `json:"new_size"`
	OldLink         string   `json:"old_link"`
	NewLink         string   `json:"new_link"`
	OldNodesSpanned int      `json:"old_nodes_spanned"`
	NewNodesSpanned int      `json:"new_nodes_spanned"`
	OldCommS        *float64 `json:"old_comm_s,omitempty"`
	NewCommS        *float64 `json:"new_comm_s,omitempty"`
}

// compareLayouts diffs two stages' layouts and placements; nil when the
// stage has no layout on either side or nothing about it changes.
func compareLayouts(o, n *engine.StagePlan) *Layout {
	if o.Layout == nil && n.Layout == nil {
		return nil
	}
	l := &Layout{Changes: jsonChanges(mustJSON(o.Layout), mustJSON(n.Layout))}
	l.Groups = compareGroups(o, n)
	for _, g := range l.Groups {
		l.Notes = append(l.Notes, groupNotes(g)...)
	}
	if o.Estimate != nil && n.Estimate != nil && o.Estimate.BubbleFraction != n.Estimate.BubbleFraction {
		l.Notes = append(l.Notes, fmt.Sprintf("pipeline bubble %.1f%% -> %.1f%% of compute",
			100*o.Estimate.BubbleFraction, 100*n.Estimate.BubbleFraction))
	}
	if len(l.Changes)+len(l.Groups)+len(l.Notes) == 0 {
		return nil
	}
	return l
}

// compareGroups pairs the placements' groups by kind. A stage without a
// placement on one side has no groups to compare.
func compareGroups(o, n *engine.StagePlan) []GroupChange {
	if o.Placement == nil || n.Placement == nil {
		return nil
	}
	var out []GroupChange
	for _, kind := range []string{layout.KindTP, layout.KindCP, layout.KindDP, layout.KindPP} {
		a, okA := o.Placement.Group(kind)
		b, okB := n.Placement.Group(kind)
		if !okA || !okB || (a.Size == b.Size && a.Link == b.Link && a.NodesSpanned == b.NodesSpanned) {
			continue
		}
		out = append(out, GroupChange{Kind: kind, OldSize: a.Size, NewSize: b.Size, OldLink: a.Link, NewLink: b.Link,
			OldNodesSpanned: a.NodesSpanned, NewNodesSpanned: b.NodesSpanned,
			OldCommS: commS(o.Estimate, kind), NewCommS: commS(n.Estimate, kind)})
	}
	return out
}

func commS(e *estimate.Estimate, kind string) *float64 {
	if e == nil {
		return nil
	}
	v := map[string]float64{layout.KindTP: e.CommS.TP, layout.KindCP: e.CommS.CP, layout.KindDP: e.CommS.DP, layout.KindPP: e.CommS.PP}[kind]
	return &v
}

// traffic names what a parallel kind sends, for the notes.
var traffic = map[string]string{
	layout.KindTP: "TP all-reduce traffic",
	layout.KindCP: "CP attention traffic",
	layout.KindDP: "DP gradient traffic",
	layout.KindPP: "PP activation traffic",
}

// groupNotes says what a group's move means: traffic that now crosses a
// slower link, or comes back to a faster one.
func groupNotes(g GroupChange) []string {
	kind := strings.ToUpper(g.Kind)
	from, to := linkRank(g.OldLink), linkRank(g.NewLink)
	switch {
	case to > from && g.NewLink == layout.LinkNetwork && g.Kind == layout.KindTP:
		return []string{fmt.Sprintf("TP now crosses the NVLink domain: its all-reduces, several per layer, run over the network (%d nodes)", g.NewNodesSpanned)}
	case to > from && g.NewLink == layout.LinkNetwork:
		return []string{fmt.Sprintf("%s moves to the network (%d nodes)", traffic[g.Kind], g.NewNodesSpanned)}
	case to > from && g.OldLink == layout.LinkNone:
		return []string{fmt.Sprintf("%s now runs over %s", traffic[g.Kind], linkWord(g.NewLink))}
	case to > from:
		return []string{fmt.Sprintf("%s moves from %s to %s", traffic[g.Kind], linkWord(g.OldLink), linkWord(g.NewLink))}
	case to < from && g.NewLink == layout.LinkNone:
		return []string{fmt.Sprintf("%s stops: %s is 1", traffic[g.Kind], g.Kind)}
	case to < from:
		return []string{fmt.Sprintf("%s moves from %s back to %s", traffic[g.Kind], linkWord(g.OldLink), linkWord(g.NewLink))}
	case g.OldNodesSpanned != g.NewNodesSpanned:
		return []string{fmt.Sprintf("%s groups now span %d nodes (was %d), still over %s", kind, g.NewNodesSpanned, g.OldNodesSpanned, linkWord(g.NewLink))}
	}
	return nil
}

func linkRank(link string) int {
	switch link {
	case layout.LinkNVLink:
		return 1
	case layout.LinkPCIe:
		return 2
	case layout.LinkNetwork:
		return 3
	}
	return 0
}

func linkWord(link string) string {
	switch link {
	case layout.LinkNVLink:
		return "NVLink"
	case layout.LinkPCIe:
		return "PCIe"
	}
	return link
}

package layout

import (
	"fmt"
	"strings"

	"github.com/gpuflow/gpuflow/hardware"
)

// Parallel kinds, in Megatron rank order (fastest varying first).
const (
	KindTP = "tp"
	KindCP = "cp"
	KindDP = "dp"
	KindPP = "pp"
)

// Links a parallel group can cross, from fastest to slowest.
const (
	// LinkNone: the group has one member and communicates with nobody.
	LinkNone = "none"
	// LinkNVLink: every member sits in one NVLink domain.
	LinkNVLink = "nvlink"
	// LinkPCIe: the members share a node but not an NVLink domain.
	LinkPCIe = "pcie"
	// LinkNetwork: the members span NVLink domains on different nodes.
	LinkNetwork = "network"
)

// Placement is a layout's ranks laid onto a hardware profile.
type Placement struct {
	// Summary is one line a person can read, e.g.
	// "64 ranks on 8 nodes x 8 GPUs: tp 4 nvlink, cp 2 nvlink, dp 2 network (2 nodes), pp 4 network (4 nodes)".
	Summary string `json:"summary"`
	// Groups holds one entry per parallel kind, in the order tp, cp, dp, pp.
	Groups []Group `json:"groups"`
	// Ranks is indexed by global rank.
	Ranks []Rank `json:"ranks"`
}

// Group summarises all groups of one parallel kind.
type Group struct {
	Kind  string `json:"kind"`
	Size  int    `json:"size"`
	Count int    `json:"count"`
	// Link is the slowest link any group of this kind crosses.
	Link string `json:"link"`
	// NodesSpanned is the most nodes any one group of this kind touches.
	NodesSpanned int `json:"nodes_spanned"`
}

// Rank is where one rank runs and its coordinate in each parallel kind.
type Rank struct {
	Rank int `json:"rank"`
	Node int `json:"node"`
	GPU  int `json:"gpu"`
	TP   int `json:"tp"`
	CP   int `json:"cp"`
	DP   int `json:"dp"`
	PP   int `json:"pp"`
}

// Group returns the summary for kind (KindTP, ...); ok is false for an
// unknown kind.
func (p *Placement) Group(kind string) (Group, bool) {
	for _, g := range p.Groups {
		if g.Kind == kind {
			return g, true
		}
	}
	return Group{}, false
}

// Place lays the layout's ranks onto hw in Megatron order: rank r runs on
// node r / GPUsPerNode, GPU r % GPUsPerNode, and its coordinates vary TP
// fastest, then CP, then DP, then PP. A layout smaller than the hardware
// uses the first nodes. Place fails when a degree is not positive or the
// layout needs more GPUs than hw has; Validate explains such layouts.
func Place(l Layout, hw *hardware.Profile) (*Placement, error) {
	if err := checkPlaceable(l, hw); err != nil {
		return nil, err
	}
	ranks := placeRanks(l, hw.GPU.PerNode)
	groups := make([]Group, 0, 4)
	for _, k := range kinds(l) {
		groups = append(groups, summarise(k, len(ranks), hw))
	}
	p := &Placement{Groups: groups, Ranks: ranks}
	p.Summary = summaryLine(l, hw, groups)
	return p, nil
}

func checkPlaceable(l Layout, hw *hardware.Profile) error {
	if hw == nil || hw.GPU.PerNode < 1 || hw.Nodes < 1 {
		return fmt.Errorf("hardware profile has no GPUs to place ranks on")
	}
	if l.TP < 1 || l.PP < 1 || l.DP < 1 || l.CP < 1 {
		return fmt.Errorf("parallel degrees must be at least 1, got tp=%d pp=%d dp=%d cp=%d", l.TP, l.PP, l.DP, l.CP)
	}
	if ws, have := l.WorldSize(), hw.TotalGPUs(); ws > have {
		return fmt.Errorf("layout needs %d GPUs (tp*pp*dp*cp) but hardware %q has %d", ws, hw.Name, have)
	}
	return nil
}

func placeRanks(l Layout, perNode int) []Rank {
	ranks := make([]Rank, l.WorldSize())
	for r := range ranks {
		ranks[r] = Rank{
			Rank: r,
			Node: r / perNode,
			GPU:  r % perNode,
			TP:   r % l.TP,
			CP:   r / l.TP % l.CP,
			DP:   r / (l.TP * l.CP) % l.DP,
			PP:   r / (l.TP * l.CP * l.DP),
		}
	}
	return ranks
}

// kind describes one parallel dimension by its size and rank stride.
type kind struct {
	name         string
	size, stride int
}

func kinds(l Layout) []kind {
	return []kind{
		{KindTP, l.TP, 1},
		{KindCP, l.CP, l.TP},
		{KindDP, l.DP, l.TP * l.CP},
		{KindPP, l.PP, l.TP * l.CP * l.DP},
	}
}

// summarise walks every group of kind k in a world of that many ranks. A group's members are the ranks
// base, base+stride, ... where base has a zero coordinate in k.
func summarise(k kind, world int, hw *hardware.Profile) Group {
	g := Group{Kind: k.name, Size: k.size, Count: world / k.size, Link: LinkNone, NodesSpanned: 1}
	if k.size == 1 {
		return g
	}
	for base := range world {
		if base/k.stride%k.size != 0 {
			continue
		}
		link, nodes := groupReach(base, k, hw)
		if linkOrder(link) > linkOrder(g.Link) {
			g.Link = link
		}
		g.NodesSpanned = max(g.NodesSpanned, nodes)
	}
	return g
}

// groupReach reports the link one group crosses and how many nodes it
// touches. Ranks are laid out contiguously, so a group's nodes are
// non-decreasing along its members.
func groupReach(base int, k kind, hw *hardware.Profile) (link string, nodes int) {
	perNode := hw.GPU.PerNode
	first := base
	last := base + (k.size-1)*k.stride
	nodes = 1
	for i := 1; i < k.size; i++ {
		if (base+i*k.stride)/perNode != (base+(i-1)*k.stride)/perNode {
			nodes++
		}
	}
	switch {
	case nvlinkDomain(first, hw) >= 0 && nvlinkDomain(first, hw) == nvlinkDomain(last, hw):
		return LinkNVLink, nodes
	case nodes == 1:
		return LinkPCIe, nodes
	default:
		return LinkNetwork, nodes
	}
}

// nvlinkDomain numbers the NVLink domain of a global GPU index, or -1 when
// the GPUs have no NVLink fabric. Domains are contiguous runs of
// DomainSize GPUs, which covers both an HGX board (8 GPUs in one node) and
// an NVL72 rack (72 GPUs over 18 nodes of 4).
func nvlinkDomain(gpu int, hw *hardware.Profile) int {
	if hw.Interconnect.DomainSize < 2 {
		return -1
	}
	return gpu / hw.Interconnect.DomainSize
}

func linkOrder(link string) int {
	switch link {
	case LinkNVLink:
		return 1
	case LinkPCIe:
		return 2
	case LinkNetwork:
		return 3
	}
	return 0
}

func summaryLine(l Layout, hw *hardware.Profile, groups []Group) string {
	ws := l.WorldSize()
	nodes := (ws + hw.GPU.PerNode - 1) / hw.GPU.PerNode
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		s := fmt.Sprintf("%s %d %s", g.Kind, g.Size, g.Link)
		if g.NodesSpanned > 1 {
			s += fmt.Sprintf(" (%d nodes)", g.NodesSpanned)
		}
		parts = append(parts, s)
	}
	noun := "nodes"
	if nodes == 1 {
		noun = "node"
	}
	return fmt.Sprintf("%d ranks on %d %s x %d GPUs: %s", ws, nodes, noun, hw.GPU.PerNode, strings.Join(parts, ", "))
}

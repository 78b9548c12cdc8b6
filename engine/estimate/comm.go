package estimate

import (
	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// nvlinkBusEfficiency is busbw over the per-direction datasheet bandwidth
// for large all_gather and reduce_scatter: 342.9 and 341.8 GB/s of
// 450 GB/s on 4x H200 (reference measurements, nccl-tests at 4 GiB; docs/references.md).
const nvlinkBusEfficiency = 0.76

// hbmEfficiency is achieved over datasheet HBM bandwidth: 4.22 of 4.8 TB/s
// for a device copy on H200 (reference measurements).
const hbmEfficiency = 0.88

// hbm is the bandwidth a memory-bound kernel reaches on this GPU.
func (j *job) hbm() float64 { return j.in.Hardware.GPU.HBMBytesPerS * hbmEfficiency }

// link is the bandwidth and latency one parallel group sees.
type link struct {
	busBW    float64 // bytes per second, nccl-tests bus bandwidth
	latencyS float64 // per algorithm step
}

// links prices each link kind of a profile, preferring calibrated busbw.
type links struct {
	hw  *hardware.Profile
	cal *calibration.Profile
	// calibrated records which link kinds used a measured busbw.
	calibrated map[string]bool
}

// forGroup is the link a group of this size and spread uses. On the
// network all groups of a kind share each node's NICs, so a group with g
// members per node gets g/GPUsPerNode of the node's bandwidth; the part of
// its ring inside a node stays bounded by NVLink.
func (ls *links) forGroup(g layout.Group) link {
	switch g.Link {
	case layout.LinkNone:
		return link{}
	case layout.LinkNVLink, layout.LinkPCIe:
		return link{busBW: ls.intra(g.Link), latencyS: ls.hw.Interconnect.LatencyS}
	}
	perNode := float64(g.Size) / float64(max(g.NodesSpanned, 1))
	bw := ls.hw.Network.NodeNetworkBytesPerS() * perNode / float64(ls.hw.GPU.PerNode)
	if v, ok := ls.measured(layout.LinkNetwork); ok {
		bw = v
	} else if perNode > 1 {
		bw = min(bw, ls.intra(layout.LinkNVLink))
	}
	return link{busBW: bw, latencyS: ls.hw.Network.LatencyS}
}

func (ls *links) intra(kind string) float64 {
	if v, ok := ls.measured(kind); ok {
		return v
	}
	return ls.hw.Interconnect.BytesPerS * nvlinkBusEfficiency
}

func (ls *links) measured(kind string) (float64, bool) {
	v, ok := ls.cal.BusBW(kind)
	if ok {
		ls.calibrated[kind] = true
	}
	return v, ok
}

// Collective times after nccl-tests' definitions: bytes is the whole
// buffer; busbw = algbw * factor.
func (k link) allReduce(bytes float64, n int) float64 {
	return k.collective(bytes, n, 2)
}

func (k link) gatherOrScatter(bytes float64, n int) float64 {
	return k.collective(bytes, n, 1)
}

// inputGradReduce is one column-parallel layer's input-gradient
// collective: an all-reduce, or under sequence parallelism a
// reduce-scatter of the same bytes.
func (k link) inputGradReduce(bytes float64, n int, sequenceParallel bool) float64 {
	if sequenceParallel {
		return k.gatherOrScatter(bytes, n)
	}
	return k.allReduce(bytes, n)
}

func (k link) collective(bytes float64, n int, passes float64) float64 {
	if n < 2 || k.busBW == 0 {
		return 0
	}
	f := float64(n-1) / float64(n)
	return passes * (float64(n-1)*k.latencyS + bytes*f/k.busBW)
}

// sendRecv is one point-to-point transfer.
func (k link) sendRecv(bytes float64) float64 {
	if k.busBW == 0 {
		return 0
	}
	return k.latencyS + bytes/k.busBW
}

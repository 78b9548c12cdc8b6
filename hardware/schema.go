package hardware

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Block paths inside a hardware block body; "" is the body itself.
const (
	blockTop          = ""
	blockGPU          = "gpu"
	blockTFLOPS       = "gpu.tflops"
	blockInterconnect = "interconnect"
	blockNetwork      = "network"
)

// attrProfile names the built-in profile a declaration starts from.
const attrProfile = "profile"

// requirement says when a declaration without a profile must set an argument.
type requirement int

const (
	optional requirement = iota
	always
	whenLinked    // the interconnect kind is not "none"
	whenNetworked // the network kind is not "none"
)

// An argument is one attribute of the hardware schema: the block it sits
// in, when it is required, the type its value converts to and how that value
// lands in a Profile.
type argument struct {
	block string
	name  string
	need  requirement
	typ   cty.Type
	set   setter
}

// path is the argument's dotted name as messages print it: "gpu.count".
func (a argument) path() string { return joinPath(a.block, a.name) }

func joinPath(block, name string) string {
	if block == "" {
		return name
	}
	return block + "." + name
}

// baseName is the last element of a block path: "tflops" for "gpu.tflops".
func baseName(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// parentPath is the block enclosing path: "gpu" for "gpu.tflops".
func parentPath(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return blockTop
}

// maxCount bounds nodes, GPUs and NICs so that products of them stay exact.
const maxCount = 1 << 20

// arguments is the whole schema below the profile attribute, in the order
// that documentation and error messages follow.
var arguments = []argument{
	{blockTop, "description", optional, cty.String, text(func(p *Profile) *string { return &p.Description })},
	{blockTop, "source", optional, cty.String, text(func(p *Profile) *string { return &p.Source })},
	{blockTop, "nodes", always, cty.Number, count(1, func(p *Profile) *int { return &p.Nodes })},
	{blockTop, "cost_per_gpu_hour", optional, cty.Number, quantity(atLeastZero, 0, func(p *Profile) *float64 { return &p.CostPerGPUHour })},
	{blockTop, "node_overhead_watts", optional, cty.Number, quantity(atLeastZero, 0, func(p *Profile) *float64 { return &p.NodeOverheadWatts })},
	{blockTop, "gpu_failures_per_mhour", optional, cty.Number, quantity(aboveZero, -6, func(p *Profile) *float64 { return &p.GPUFailuresPerHour })},
	{blockTop, "node_failures_per_mhour", optional, cty.Number, quantity(aboveZero, -6, func(p *Profile) *float64 { return &p.NodeFailuresPerHour })},
	{blockTop, "storage_write_gbps", optional, cty.Number, quantity(aboveZero, 9, func(p *Profile) *float64 { return &p.StorageWriteBytesPerS })},
	{blockTop, "storage_read_gbps", optional, cty.Number, quantity(aboveZero, 9, func(p *Profile) *float64 { return &p.StorageReadBytesPerS })},

	{blockGPU, "model", always, cty.String, text(func(p *Profile) *string { return &p.GPU.Model })},
	{blockGPU, "count", always, cty.Number, count(1, func(p *Profile) *int { return &p.GPU.PerNode })},
	{blockGPU, "memory_gib", always, cty.Number, gibibytes(func(p *Profile) *int64 { return &p.GPU.MemoryBytes })},
	{blockGPU, "compute_capability", optional, cty.String, computeCapability(func(p *Profile) *string { return &p.GPU.ComputeCapability })},
	{blockGPU, "hbm_tbps", always, cty.Number, quantity(aboveZero, 12, func(p *Profile) *float64 { return &p.GPU.HBMBytesPerS })},
	{blockGPU, "tdp_watts", optional, cty.Number, quantity(atLeastZero, 0, func(p *Profile) *float64 { return &p.GPU.TDPWatts })},

	{blockTFLOPS, PrecisionBF16, optional, cty.Number, rating(PrecisionBF16)},
	{blockTFLOPS, PrecisionFP16, optional, cty.Number, rating(PrecisionFP16)},
	{blockTFLOPS, PrecisionFP8, optional, cty.Number, rating(PrecisionFP8)},
	{blockTFLOPS, PrecisionTF32, optional, cty.Number, rating(PrecisionTF32)},

	{blockInterconnect, "kind", always, cty.String, oneOf(interconnectKinds, func(p *Profile) *string { return &p.Interconnect.Kind })},
	{blockInterconnect, "bandwidth_gbps", whenLinked, cty.Number, quantity(aboveZero, 9, func(p *Profile) *float64 { return &p.Interconnect.BytesPerS })},
	{blockInterconnect, "latency_us", whenLinked, cty.Number, quantity(atLeastZero, -6, func(p *Profile) *float64 { return &p.Interconnect.LatencyS })},
	{blockInterconnect, "domain_size", always, cty.Number, count(1, func(p *Profile) *int { return &p.Interconnect.DomainSize })},
	{blockInterconnect, "nvlink_multicast", optional, cty.Bool, negated(func(p *Profile) *bool { return &p.Interconnect.MulticastOff })},

	{blockNetwork, "kind", always, cty.String, oneOf(networkKinds, func(p *Profile) *string { return &p.Network.Kind })},
	{blockNetwork, "nics_per_node", whenNetworked, cty.Number, count(1, func(p *Profile) *int { return &p.Network.NICsPerNode })},
	{blockNetwork, "nic_gbit", whenNetworked, cty.Number, quantity(aboveZero, 0, func(p *Profile) *float64 { return &p.Network.GbpsPerNIC })},
	{blockNetwork, "gpudirect_rdma", optional, cty.Bool, boolean(func(p *Profile) *bool { return &p.Network.GPUDirectRDMA })},
	{blockNetwork, "latency_us", whenNetworked, cty.Number, quantity(atLeastZero, -6, func(p *Profile) *float64 { return &p.Network.LatencyS })},
}

var (
	interconnectKinds = []string{InterconnectNVLink3, InterconnectNVLink4, InterconnectNVLink5, InterconnectPCIe, InterconnectNone}
	networkKinds      = []string{NetworkIB, NetworkRoCE, NetworkEthernet, NetworkNone}
)

// nestedBlocks lists the blocks each block may hold, each at most once.
var nestedBlocks = map[string][]string{
	blockTop: {"gpu", "interconnect", "network"},
	blockGPU: {"tflops"},
}

// schemas holds the hcl.BodySchema of each block path. Every attribute is
// optional to HCL: which ones are required depends on whether a profile is
// set, so decode checks that itself.
var schemas = buildSchemas()

func buildSchemas() map[string]*hcl.BodySchema {
	out := map[string]*hcl.BodySchema{blockTop: {Attributes: []hcl.AttributeSchema{{Name: attrProfile}}}}
	for _, path := range []string{blockGPU, blockTFLOPS, blockInterconnect, blockNetwork} {
		out[path] = &hcl.BodySchema{}
	}
	out[blockGPU].Attributes = append(out[blockGPU].Attributes, hcl.AttributeSchema{Name: attrDatasheet})
	for _, a := range arguments {
		out[a.block].Attributes = append(out[a.block].Attributes, hcl.AttributeSchema{Name: a.name})
	}
	for path, blocks := range nestedBlocks {
		for _, b := range blocks {
			out[path].Blocks = append(out[path].Blocks, hcl.BlockHeaderSchema{Type: b})
		}
	}
	return out
}

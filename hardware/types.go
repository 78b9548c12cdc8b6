package hardware

// Profile is a fully resolved hardware description. All figures are SI:
// bytes, bytes per second, seconds, watts. TFLOP/s figures are dense (no
// sparsity) per GPU.
type Profile struct {
	Name string
	// BaseProfile names the built-in profile this one was derived from by
	// overrides; it is empty for a built-in or an inline declaration.
	BaseProfile string
	Description string
	// Source cites where the figures come from (a datasheet, a reference guide).
	Source         string
	Nodes          int
	GPU            GPU
	Interconnect   Interconnect
	Network        Network
	CostPerGPUHour float64 // US dollars
	// NodeOverheadWatts is what a node draws besides its GPUs (CPUs,
	// memory, NICs, fans, power conversion) while training.
	NodeOverheadWatts float64
	// GPUFailuresPerHour and NodeFailuresPerHour are the rates of job
	// interruptions caused by one GPU and by one node's other parts; zero
	// means the published defaults (Reliability).
	GPUFailuresPerHour, NodeFailuresPerHour float64
	// StorageWriteBytesPerS and StorageReadBytesPerS are the checkpoint
	// storage bandwidth per node; zero means the published defaults.
	StorageWriteBytesPerS, StorageReadBytesPerS float64
}

// Published defaults for the reliability and storage figures a profile
// leaves unset (docs/hardware.md gives the sources).
const (
	// DefaultGPUFailuresPerHour: 268 of the 419 unexpected interruptions
	// of a 54-day pre-training on 16,384 H100 were attributed to the GPU
	// (faulty GPU 148, HBM3 72, SRAM 19, GPU system processor 17, silent
	// data corruption 6, thermal interface and sensor 6): The Llama 3 Herd
	// of Models, Table 5.
	DefaultGPUFailuresPerHour = 268.0 / (16384 * 54 * 24)
	// DefaultNodeFailuresPerHour: the other 151 (software, network,
	// host, NIC, SSD, power, ...) over its 2,048 nodes.
	DefaultNodeFailuresPerHour = 151.0 / (2048 * 54 * 24)
	// DefaultStorageWriteBytesPerS and DefaultStorageReadBytesPerS: a
	// 13.8 TB checkpoint written at 273 GB/s and loaded at 1 TB/s by 384
	// DGX A100 nodes (Efficient Large-Scale Language Model Training on
	// GPU Clusters Using Megatron-LM, section 5.10), per node.
	DefaultStorageWriteBytesPerS = 273e9 / 384
	DefaultStorageReadBytesPerS  = 1e12 / 384
)

// Reliability returns the failure rates and storage bandwidth, with the
// published defaults where the profile sets none.
func (p *Profile) Reliability() (gpuPerHour, nodePerHour, writeBytesPerS, readBytesPerS float64) {
	or := func(v, def float64) float64 {
		if v > 0 {
			return v
		}
		return def
	}
	return or(p.GPUFailuresPerHour, DefaultGPUFailuresPerHour), or(p.NodeFailuresPerHour, DefaultNodeFailuresPerHour),
		or(p.StorageWriteBytesPerS, DefaultStorageWriteBytesPerS), or(p.StorageReadBytesPerS, DefaultStorageReadBytesPerS)
}

// GPU describes one accelerator and how many sit in a node.
type GPU struct {
	// Datasheet names the catalogue entry the figures started from; empty
	// when the gpu block declares them all.
	Datasheet   string
	Model       string
	PerNode     int
	MemoryBytes int64
	// TFLOPS holds dense peak TFLOP/s per precision: keys are the Precision*
	// constants. A missing or zero entry means the GPU lacks that precision.
	TFLOPS            map[string]float64
	HBMBytesPerS      float64
	TDPWatts          float64
	ComputeCapability string // e.g. "9.0"
}

// Precisions a GPU may be rated for.
const (
	PrecisionBF16 = "bf16"
	PrecisionFP16 = "fp16"
	PrecisionFP8  = "fp8"
	PrecisionTF32 = "tf32"
)

// Interconnect is the scale-up fabric inside an NVLink domain.
type Interconnect struct {
	Kind string // InterconnectNVLink4, InterconnectNVLink5, InterconnectPCIe, ...
	// BytesPerS is the per-direction bandwidth of one GPU into the fabric.
	BytesPerS float64
	LatencyS  float64
	// DomainSize is how many GPUs share one NVLink domain: 8 on an HGX
	// board, 72 on an NVL72 rack (which then spans several "nodes").
	DomainSize int
	// MulticastOff is set by nvlink_multicast = false: the GPUs sit in a
	// shared virtual machine whose host is not safe with NVLink SHARP
	// (NVLS) multicast, so NCCL, PyTorch and NVSHMEM must not use it.
	MulticastOff bool
}

// Interconnect kinds. InterconnectNone is a node of a single GPU.
const (
	InterconnectNVLink3 = "nvlink3"
	InterconnectNVLink4 = "nvlink4"
	InterconnectNVLink5 = "nvlink5"
	InterconnectPCIe    = "pcie"
	InterconnectNone    = "none"
)

// Network is the scale-out fabric between nodes.
type Network struct {
	Kind          string // NetworkIB, NetworkRoCE, NetworkEthernet, NetworkNone
	NICsPerNode   int
	GbpsPerNIC    float64 // line rate in gigabits per second
	GPUDirectRDMA bool
	LatencyS      float64
}

// Network kinds.
const (
	NetworkIB       = "ib"
	NetworkRoCE     = "roce"
	NetworkEthernet = "ethernet"
	NetworkNone     = "none"
)

// TotalGPUs is the number of GPUs across all nodes.
func (p *Profile) TotalGPUs() int { return p.Nodes * p.GPU.PerNode }

// Supports reports whether the GPU has a dense rating for precision.
func (g GPU) Supports(precision string) bool { return g.TFLOPS[precision] > 0 }

// NodeNetworkBytesPerS is the aggregate scale-out bandwidth of one node in
// one direction.
func (n Network) NodeNetworkBytesPerS() float64 {
	return float64(n.NICsPerNode) * n.GbpsPerNIC * 1e9 / 8
}

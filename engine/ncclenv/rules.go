package ncclenv

import (
	"github.com/gpuflow/gpuflow/hardware"
)

// The reasons below restate facts from the system guides and networking
// notes that docs/references.md lists.

func p2pLevel(hw *hardware.Profile) (Setting, bool) {
	if !hasNVLink(hw) || !multiGPU(hw) {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_P2P_LEVEL", Value: "NVL",
		Reason: "GPUs share an NVLink domain; NVL limits peer-to-peer transfers to NVLink so they never fall back to PCIe through the CPU."}, true
}

func mnnvl(hw *hardware.Profile) (Setting, bool) {
	if !hasNVLink(hw) || hw.Interconnect.DomainSize <= hw.GPU.PerNode || hw.Nodes < 2 {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_MNNVL_ENABLE", Value: "1",
		Reason: "The NVLink domain spans nodes (multi-node NVLink, as in NVL72); this keeps traffic between trays on NVLink instead of the network."}, true
}

// multicastReason says why a profile with nvlink_multicast = false keeps
// every library off NVLink SHARP (NVLS) multicast.
const multicastReason = "The hardware profile sets nvlink_multicast = false, as for GPUs in a shared virtual machine whose host is not safe with NVLink SHARP (NVLS) multicast; it stays off."

func nvlsOff(hw *hardware.Profile) (Setting, bool) {
	return multicastGuard(hw, "NCCL_NVLS_ENABLE", "0")
}

func torchMulticastOff(hw *hardware.Profile) (Setting, bool) {
	return multicastGuard(hw, "TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
}

func nvshmemNVLSOff(hw *hardware.Profile) (Setting, bool) {
	return multicastGuard(hw, "NVSHMEM_DISABLE_NVLS", "1")
}

func multicastGuard(hw *hardware.Profile, name, value string) (Setting, bool) {
	if !hw.Interconnect.MulticastOff {
		return Setting{}, false
	}
	return Setting{Name: name, Value: value, Reason: multicastReason, Pinned: true}, true
}

func ibEnable(hw *hardware.Profile) (Setting, bool) {
	if !networked(hw) || !rdma(hw) {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_IB_DISABLE", Value: "0",
		Reason: "The network is RDMA-capable (" + hw.Network.Kind + "); an inherited NCCL_IB_DISABLE=1 would silently push all traffic onto TCP sockets."}, true
}

func ibHCA(hw *hardware.Profile) (Setting, bool) {
	if !networked(hw) || !rdma(hw) {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_IB_HCA", Value: "mlx5",
		Reason: "Restricts NCCL to the NVIDIA ConnectX adapters (mlx5_*) the guides' nodes use for GPU traffic; name your HCAs here if they differ."}, true
}

func gidIndex(hw *hardware.Profile) (Setting, bool) {
	if !networked(hw) || hw.Network.Kind != hardware.NetworkRoCE {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_IB_GID_INDEX", Value: "3",
		Reason: "RoCEv2 needs the GID of the routable (IPv4/UDP) address, index 3 on the XE9780 guide's ConnectX setup; check /sys/class/infiniband/*/ports/*/gid_attrs/types."}, true
}

func gdrLevel(hw *hardware.Profile) (Setting, bool) {
	if !networked(hw) || !rdma(hw) || !hw.Network.GPUDirectRDMA {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_NET_GDR_LEVEL", Value: "SYS",
		Reason: "The NICs support GPUDirect RDMA; SYS (5 in the guides) lets the NIC read GPU memory directly at any PCIe distance instead of staging through host memory."}, true
}

func socketIfname(hw *hardware.Profile) (Setting, bool) {
	if !networked(hw) {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_SOCKET_IFNAME", Value: "^lo,docker",
		Reason: "NCCL's bootstrap (and socket transport) must not pick the loopback or a container bridge; name the fabric interface (e.g. ib0) here if nodes have several."}, true
}

func ibDisableForSockets(hw *hardware.Profile) (Setting, bool) {
	if !networked(hw) || rdma(hw) {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_IB_DISABLE", Value: "1",
		Reason: "The network is plain Ethernet without RDMA; NCCL uses TCP sockets, so expect inter-node collectives far below NVLink speed."}, true
}

// ringNodesLimit: past about 32 nodes tree and in-network (SHARP)
// algorithms win on latency, so NCCL's own choice is left alone there.
const ringNodesLimit = 32

func ringAlgorithm(hw *hardware.Profile) (Setting, bool) {
	if !networked(hw) || !rdma(hw) || hw.Nodes >= ringNodesLimit {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_ALGO", Value: "Ring",
		Reason: "Training collectives are large and bandwidth-bound; Ring gives the highest bus bandwidth across a few nodes (the Nebius H100 guide's 2-node all-reduce used it)."}, true
}

func debugLevel(hw *hardware.Profile) (Setting, bool) {
	if !multiGPU(hw) {
		return Setting{}, false
	}
	return Setting{Name: "NCCL_DEBUG", Value: "WARN",
		Reason: "Reports NCCL problems (such as a fallback from peer-to-peer to copies) without INFO's per-call logging, which slows training."}, true
}

package ncclenv

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/hardware"
)

func profile(t *testing.T, name string, nodes int) *hardware.Profile {
	t.Helper()
	hw, err := hardware.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if nodes > 0 {
		hw.Nodes = nodes
	}
	return hw
}

func TestDerive(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		profile string
		nodes   int
		edit    func(*hardware.Profile)
		want    []string
	}{
		"one HGX H100 node": {profile: "nebius-h100-8",
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_DEBUG=WARN"}},
		"two InfiniBand nodes": {profile: "nebius-h100-8", nodes: 2,
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_IB_DISABLE=0", "NCCL_IB_HCA=mlx5", "NCCL_NET_GDR_LEVEL=SYS",
				"NCCL_SOCKET_IFNAME=^lo,docker", "NCCL_ALGO=Ring", "NCCL_DEBUG=WARN"}},
		"two RoCEv2 nodes": {profile: "dell-xe9780-b300", nodes: 2,
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_IB_DISABLE=0", "NCCL_IB_HCA=mlx5", "NCCL_IB_GID_INDEX=3",
				"NCCL_NET_GDR_LEVEL=SYS", "NCCL_SOCKET_IFNAME=^lo,docker", "NCCL_ALGO=Ring", "NCCL_DEBUG=WARN"}},
		"a large cluster leaves the algorithm to NCCL": {profile: "nebius-h100-8", nodes: 64,
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_IB_DISABLE=0", "NCCL_IB_HCA=mlx5", "NCCL_NET_GDR_LEVEL=SYS",
				"NCCL_SOCKET_IFNAME=^lo,docker", "NCCL_DEBUG=WARN"}},
		"nvl72 rack": {profile: "gb200-nvl72",
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_MNNVL_ENABLE=1", "NCCL_IB_DISABLE=0", "NCCL_IB_HCA=mlx5",
				"NCCL_NET_GDR_LEVEL=SYS", "NCCL_SOCKET_IFNAME=^lo,docker", "NCCL_ALGO=Ring", "NCCL_DEBUG=WARN"}},
		"plain ethernet": {profile: "nebius-h100-8", nodes: 2,
			edit: func(hw *hardware.Profile) {
				hw.Network = hardware.Network{Kind: hardware.NetworkEthernet, NICsPerNode: 1, GbpsPerNIC: 100}
			},
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_SOCKET_IFNAME=^lo,docker", "NCCL_IB_DISABLE=1", "NCCL_DEBUG=WARN"}},
		"shared 4x H200 virtual machine": {profile: "h200-x4",
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1",
				"NVSHMEM_DISABLE_NVLS=1", "NCCL_DEBUG=WARN"}},
		"shared 2x H200 virtual machine": {profile: "h200-x2",
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1",
				"NVSHMEM_DISABLE_NVLS=1", "NCCL_DEBUG=WARN"}},
		"shared machine renamed by a workload": {profile: "h200-x4",
			edit: func(hw *hardware.Profile) { hw.Name, hw.Description = "lab", "" },
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1",
				"NVSHMEM_DISABLE_NVLS=1", "NCCL_DEBUG=WARN"}},
		"shared single H100": {profile: "h100-x1",
			want: []string{"NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1", "NVSHMEM_DISABLE_NVLS=1"}},
		"any profile that turns multicast off": {profile: "nebius-h100-8",
			edit: func(hw *hardware.Profile) { hw.Interconnect.MulticastOff = true },
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1",
				"NVSHMEM_DISABLE_NVLS=1", "NCCL_DEBUG=WARN"}},
		"a shared profile that turns multicast back on": {profile: "h200-x4",
			edit: func(hw *hardware.Profile) { hw.Interconnect.MulticastOff = false },
			want: []string{"NCCL_P2P_LEVEL=NVL", "NCCL_DEBUG=WARN"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hw := profile(t, tc.profile, tc.nodes)
			if tc.edit != nil {
				tc.edit(hw)
			}
			got := Derive(hw)
			if diff := cmp.Diff(tc.want, Environ(got)); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			for _, s := range got {
				if s.Source != SourceDerived || !strings.HasSuffix(s.Reason, ".") || len(s.Reason) < 40 {
					t.Errorf("%s: source %q, reason %q; want derived with a full sentence", s.Name, s.Source, s.Reason)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	derived := Derive(profile(t, "h200-x4", 0))
	got := Merge(derived, map[string]string{
		"NCCL_DEBUG":                  "INFO",
		"NCCL_NVLS_ENABLE":            "1",
		"NCCL_P2P_LEVEL":              "NVL",
		"NCCL_BUFFSIZE":               "8388608",
		"CUDA_DEVICE_MAX_CONNECTIONS": "1",
	})
	type short struct{ Name, Value, Source string }
	var gotShort []short
	for _, s := range got {
		gotShort = append(gotShort, short{s.Name, s.Value, s.Source})
	}
	want := []short{
		{"NCCL_P2P_LEVEL", "NVL", SourceDerived},
		{"NCCL_NVLS_ENABLE", "0", SourcePinned},
		{"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", SourceDerived},
		{"NVSHMEM_DISABLE_NVLS", "1", SourceDerived},
		{"NCCL_DEBUG", "INFO", SourceOverride},
		{"CUDA_DEVICE_MAX_CONNECTIONS", "1", SourceOverride},
		{"NCCL_BUFFSIZE", "8388608", SourceOverride},
	}
	if diff := cmp.Diff(want, gotShort); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[1].Reason, "NCCL_NVLS_ENABLE=1 was refused") {
		t.Errorf("pinned setting does not say the override was refused: %q", got[1].Reason)
	}
	if !strings.Contains(got[4].Reason, `would be "WARN"`) {
		t.Errorf("override does not say what it replaced: %q", got[4].Reason)
	}
	if diff := cmp.Diff(derived, Merge(derived, nil)); diff != "" {
		t.Errorf("merging no overrides changed the settings:\n%s", diff)
	}
}

func TestDeriveNil(t *testing.T) {
	t.Parallel()
	if got := Derive(nil); got != nil {
		t.Errorf("Derive(nil) = %v", got)
	}
}

package preflight

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func text(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestCheckPortRange(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		file    string
		min     int
		wantErr bool
		wantAny bool
	}{
		"linux default":       {file: "32768\t60999\n", min: 16384},
		"too narrow":          {file: "50000 51000\n", min: 16384, wantErr: true, wantAny: true},
		"exactly the minimum": {file: "10000 26383\n", min: 16384},
		"garbled":             {file: "nonsense\n", min: 16384, wantAny: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := Host{FS: fstest.MapFS{"proc/sys/net/ipv4/ip_local_port_range": text(tc.file)}}
			got := h.CheckPortRange(tc.min)
			if (len(got) > 0) != tc.wantAny || (len(got) > 0 && got[0].Error != tc.wantErr) {
				t.Errorf("findings %+v, want any=%v error=%v", got, tc.wantAny, tc.wantErr)
			}
		})
	}
}

func TestGPUAffinity(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"sys/bus/pci/devices/0000:18:00.0/numa_node":     text("0\n"),
		"sys/bus/pci/devices/0000:18:00.0/local_cpulist": text("0-3,8\n"),
		"sys/bus/pci/devices/0000:9a:00.0/numa_node":     text("1\n"),
		"sys/bus/pci/devices/0000:9a:00.0/local_cpulist": text("4-7\n"),
	}
	h := Host{FS: fsys, AllowedCPUs: []int{8, 9}}
	got, findings := h.CheckAffinity([]string{"00000000:18:00.0", "0000:9A:00.0", "0000:01:00.0"})
	want := []Affinity{
		{BusID: "00000000:18:00.0", NUMANode: 0, LocalCPUs: "0-3,8", Reachable: true},
		{BusID: "0000:9A:00.0", NUMANode: 1, LocalCPUs: "4-7", Reachable: false},
		{BusID: "0000:01:00.0", NUMANode: -1, Reachable: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("affinity (-want +got):\n%s", diff)
	}
	if len(findings) != 2 || !findings[0].Error || findings[1].Error {
		t.Errorf("findings = %+v, want an error for GPU 1 and a note for GPU 2", findings)
	}
}

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	got, err := ParseCPUList("0-2,5,7-8\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 5, 7, 8}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"a-b", "3-1", "1,x"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) succeeded", bad)
		}
	}
}

func TestCheckNCCLEnv(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"sys/class/net/eth0/type": text("1"),
		"sys/class/net/ib0/type":  text("32"),
		"sys/class/net/lo/type":   text("772"),
	}
	tests := map[string]struct {
		env     []string
		network string
		want    []Finding
	}{
		"clean": {env: []string{"PATH=/bin", "NCCL_NVLS_ENABLE=0", "NCCL_SOCKET_IFNAME=ib"}, network: "ib"},
		"p2p disabled and a typo": {
			env: []string{"NCCL_P2P_DISABLE=1", "NCCL_IB_HCAS=mlx5"},
			want: []Finding{
				{Check: "nccl_env", Message: "NCCL_IB_HCAS is not a variable NCCL reads; a typo?"},
				{Check: "nccl_env", Error: true, Message: "NCCL_P2P_DISABLE=1 sends GPU-to-GPU traffic through host memory instead of NVLink or PCIe peer access"},
			},
		},
		"IB off on an IB cluster": {
			env: []string{"NCCL_IB_DISABLE=1"}, network: "ib",
			want: []Finding{{Check: "nccl_env", Error: true, Message: "NCCL_IB_DISABLE=1 on a node whose network is ib: NCCL falls back to TCP sockets"}},
		},
		"IB off with no IB": {env: []string{"NCCL_IB_DISABLE=1"}, network: "ethernet"},
		"too many socket threads": {
			env:  []string{"NCCL_SOCKET_NTHREADS=16", "NCCL_NSOCKS_PERTHREAD=8"},
			want: []Finding{{Check: "nccl_env", Error: true, Message: "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = 128, over NCCL's limit of 64"}},
		},
		"interface that does not exist": {
			env:  []string{"NCCL_SOCKET_IFNAME==ens5"},
			want: []Finding{{Check: "nccl_env", Error: true, Message: "NCCL_SOCKET_IFNAME==ens5 matches no network interface of this node"}},
		},
		"exclusion leaving an interface": {env: []string{"NCCL_SOCKET_IFNAME=^lo,docker"}},
		"exclusion leaving none": {
			env:  []string{"NCCL_SOCKET_IFNAME=^lo,eth,ib"},
			want: []Finding{{Check: "nccl_env", Error: true, Message: "NCCL_SOCKET_IFNAME=^lo,eth,ib matches no network interface of this node"}},
		},
		"missing topology file": {
			env:  []string{"NCCL_TOPO_FILE=/etc/nccl/topo.xml"},
			want: []Finding{{Check: "nccl_env", Error: true, Message: "NCCL_TOPO_FILE=/etc/nccl/topo.xml cannot be read: open etc/nccl/topo.xml: file does not exist"}},
		},
		"verbose debug": {
			env:  []string{"NCCL_DEBUG=INFO"},
			want: []Finding{{Check: "nccl_env", Message: "NCCL_DEBUG=INFO logs every connection and slows start-up; WARN is the production setting"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := Host{FS: fsys, Environ: tc.env}
			if diff := cmp.Diff(tc.want, h.CheckNCCLEnv(tc.network)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

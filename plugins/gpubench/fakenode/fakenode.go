// Package fakenode is a node.Node without GPUs: every figure follows from
// the rates it is given, so tests of the benchmark stage can predict each
// number, threshold verdict and table line.
package fakenode

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing/fstest"

	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
)

// Node answers as a node whose GPUs run at the given rates.
type Node struct {
	Info []node.GPU
	Vers node.Versions
	// HealthOf is each GPU's state; GPUs beyond it read as healthy defaults.
	HealthOf []node.Health
	// TFLOPS is each GPU's rate by dtype.
	TFLOPS []map[string]float64
	// CopyTBps and TriadTBps are each GPU's memory rates.
	CopyTBps, TriadTBps []float64
	// P2PGBps is every pair's one-way rate; both ways doubles it.
	P2PGBps float64
	// BusBWGBps is every collective's bus bandwidth.
	BusBWGBps float64
	// Wrong is what every check counts as wrong elements.
	Wrong int64
	// Ranks is the communicator's size, as in a job of several nodes;
	// 0 means the node's GPUs alone.
	Ranks int
	// Slowdown stretches each GPU's collective time by its factor (1 where
	// absent); the collective takes the slowest GPU's time.
	Slowdown []float64
	// HangOn makes the collective of this op hang (report a HungError).
	HangOn node.Op
	// Fail makes the named method fail with this error.
	Fail map[string]error

	mu     sync.Mutex
	Calls  []string
	Closed bool
}

var _ node.Node = (*Node)(nil)

// New is a node of n GPUs named name at the same rates.
func New(n int, name string) *Node {
	f := &Node{
		Vers:      node.Versions{Driver: "580.159.04", CUDA: "13.0", NCCL: "2.28.3", CuBLASLt: "13.1.0", Libraries: map[string]string{}},
		P2PGBps:   400,
		BusBWGBps: 350,
	}
	for i := range n {
		f.Info = append(f.Info, node.GPU{Index: i, Name: name, BusID: fmt.Sprintf("0000:%02x:00.0", 0x18+i),
			MemoryBytes: 150_000_000_000, ComputeCapability: "9.0", Multiprocessors: 132})
		f.TFLOPS = append(f.TFLOPS, map[string]float64{"bf16": 750, "fp16": 720, "tf32": 380, "fp8": 1400})
		f.CopyTBps = append(f.CopyTBps, 4.2)
		f.TriadTBps = append(f.TriadTBps, 4.3)
	}
	return f
}

// Host is a quiet machine around the node: each GPU on NUMA node 0 with
// every CPU local, NVLS off, two CPUs allowed; preflight finds nothing to
// warn of.
func (f *Node) Host() preflight.Host {
	fsys := fstest.MapFS{"proc/sys/net/ipv4/ip_local_port_range": {Data: []byte("32768 60999\n")}}
	for _, g := range f.Info {
		dir := "sys/bus/pci/devices/" + strings.ToLower(g.BusID)
		fsys[dir+"/numa_node"] = &fstest.MapFile{Data: []byte("0\n")}
		fsys[dir+"/local_cpulist"] = &fstest.MapFile{Data: []byte("0-63\n")}
	}
	return preflight.Host{FS: fsys, Environ: []string{"NCCL_NVLS_ENABLE=0"}, AllowedCPUs: []int{0, 1}}
}

func (f *Node) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, name)
	return f.Fail[name]
}

// GPUs implements node.Node.
func (f *Node) GPUs() []node.GPU { return f.Info }

// Versions implements node.Node.
func (f *Node) Versions() node.Versions { return f.Vers }

// Health implements node.Node.
func (f *Node) Health(context.Context) ([]node.Health, error) {
	if err := f.call("Health"); err != nil {
		return nil, err
	}
	var out []node.Health
	for i, g := range f.Info {
		if i < len(f.HealthOf) {
			out = append(out, f.HealthOf[i])
			continue
		}
		out = append(out, node.Health{GPU: i, Name: g.Name, BusID: g.BusID, MemoryBytes: g.MemoryBytes,
			ECCEnabled: true, NVLinksSupported: 18, NVLinksActive: 18, PCIeGen: 5, PCIeGenMax: 5,
			PCIeWidth: 16, PCIeWidthMax: 16, TemperatureC: 35, PowerW: 120, PowerLimitW: 700})
	}
	return out, nil
}

// GEMM implements node.Node.
func (f *Node) GEMM(_ context.Context, spec node.GEMMSpec) ([]node.GEMMResult, error) {
	if err := f.call("GEMM " + spec.DType); err != nil {
		return nil, err
	}
	var out []node.GEMMResult
	for i := range f.Info {
		out = append(out, node.GEMMResult{GPU: i, Seconds: spec.FLOP() / (f.TFLOPS[i][spec.DType] * 1e12),
			Candidates: spec.TopK, Best: 1, RelErr: 2e-3})
	}
	return out, nil
}

// HBM implements node.Node.
func (f *Node) HBM(_ context.Context, spec node.HBMSpec) ([]node.HBMResult, error) {
	if err := f.call("HBM"); err != nil {
		return nil, err
	}
	var out []node.HBMResult
	for i := range f.Info {
		out = append(out, node.HBMResult{GPU: i, Wrong: f.Wrong,
			CopySeconds:  2 * float64(spec.Bytes) / (f.CopyTBps[i] * 1e12),
			TriadSeconds: 3 * float64(spec.TriadArrayBytes()) / (f.TriadTBps[i] * 1e12)})
	}
	return out, nil
}

// P2P implements node.Node.
func (f *Node) P2P(_ context.Context, spec node.P2PSpec) ([]node.P2PResult, error) {
	if err := f.call("P2P"); err != nil {
		return nil, err
	}
	var out []node.P2PResult
	for s := range f.Info {
		for d := range f.Info {
			if s == d {
				continue
			}
			r := node.P2PResult{Src: s, Dst: d, PeerAccess: true, Wrong: f.Wrong,
				OneWaySeconds: float64(spec.Bytes) / (f.P2PGBps * 1e9)}
			if s < d {
				r.BidirSeconds = r.OneWaySeconds
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Collective implements node.Node.
func (f *Node) Collective(_ context.Context, spec node.CollectiveSpec) (node.CollectiveResult, error) {
	if err := f.call(fmt.Sprintf("Collective %s %d %v", spec.Op, spec.Bytes, spec.InPlace)); err != nil {
		return node.CollectiveResult{}, err
	}
	ranks := f.Ranks
	if ranks == 0 {
		ranks = len(f.Info)
	}
	layout, err := spec.Op.Layout(spec.Bytes, node.ElemSize(spec.DType), ranks)
	if err != nil {
		return node.CollectiveResult{}, err
	}
	if spec.Op == f.HangOn {
		return node.CollectiveResult{Layout: layout, Ranks: ranks}, &node.HungError{Spec: spec, Waiting: []int{len(f.Info) - 1}}
	}
	factor := spec.Op.BusFactor(ranks)
	secs := float64(layout.Bytes) * factor / (f.BusBWGBps * 1e9)
	if factor == 0 {
		secs = 1e-3
	}
	res := node.CollectiveResult{Layout: layout, Ranks: ranks, Iters: spec.Iters, Wrong: f.Wrong}
	for i := range f.Info {
		s := secs
		if i < len(f.Slowdown) {
			s *= f.Slowdown[i]
		}
		res.RankSeconds = append(res.RankSeconds, s)
		res.Seconds = max(res.Seconds, s)
	}
	return res, nil
}

// Close implements node.Node.
func (f *Node) Close() error {
	f.Closed = true
	return f.call("Close")
}

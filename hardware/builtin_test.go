package hardware

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinNames(t *testing.T) {
	t.Parallel()
	want := []string{
		"dell-xe9780-b300", "dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "gb200-nvl72",
		"gh200", "h100-x1", "h200-x1", "h200-x2", "h200-x4", "hgx-b200-8", "hgx-h200-8",
		"nebius-h100-8",
	}
	if diff := cmp.Diff(want, BuiltinNames()); diff != "" {
		t.Errorf("BuiltinNames() mismatch (-want +got):\n%s", diff)
	}
}

// TestBuiltins parses every embedded profile and checks its figures against
// the ranges any real GPU node of 2020-2026 falls in, so that a slipped
// unit (GB for GiB, Gb for GB) shows up.
func TestBuiltins(t *testing.T) {
	t.Parallel()
	if _, err := builtins.all(); err != nil {
		t.Fatalf("embedded profiles do not load: %v", err)
	}
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string(nil), implausible(p)); diff != "" {
				t.Errorf("implausible figures (-want +got):\n%s", diff)
			}
			src, err := profileFiles.ReadFile("profiles/" + name + ".hcl")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(src, []byte("# Source: ")) {
				t.Errorf("profiles/%s.hcl does not start with a '# Source: ' comment", name)
			}
		})
	}
}

// implausible lists the figures of p outside their sane range.
func implausible(p *Profile) []string {
	var bad []string
	check := func(ok bool, what string) {
		if !ok {
			bad = append(bad, what)
		}
	}
	gib := float64(p.GPU.MemoryBytes) / (1 << 30)
	bf16 := p.GPU.TFLOPS[PrecisionBF16]
	check(p.Description != "" && p.Source != "", "description and source set")
	check(p.Nodes >= 1 && p.GPU.PerNode >= 1 && p.GPU.PerNode <= 8, "1..8 GPUs per node")
	check(gib >= 32 && gib <= 300, "GPU memory 32..300 GiB")
	check(bf16 >= 300 && bf16 <= 5000, "bf16 300..5000 TFLOP/s")
	fp8 := p.GPU.TFLOPS[PrecisionFP8]
	check(fp8 == 0 || math.Abs(fp8-2*bf16) <= 1, "fp8 absent or twice bf16")
	check(p.GPU.TFLOPS[PrecisionFP16] == bf16, "fp16 equal to bf16")
	check(math.Abs(p.GPU.TFLOPS[PrecisionTF32]-bf16/2) <= 1, "tf32 half of bf16")
	check(p.GPU.HBMBytesPerS >= 1.5e12 && p.GPU.HBMBytesPerS <= 1e13, "HBM 1.5..10 TB/s")
	check(p.GPU.TDPWatts >= 300 && p.GPU.TDPWatts <= 1500, "TDP 300..1500 W")
	check(p.CostPerGPUHour > 0 && p.CostPerGPUHour < 20, "cost 0..20 USD per GPU-hour")
	if p.Interconnect.Kind == InterconnectNone {
		check(p.GPU.PerNode == 1 && p.Interconnect.DomainSize == 1, "no interconnect only for one GPU")
	} else {
		check(p.Interconnect.BytesPerS >= 1e11 && p.Interconnect.BytesPerS <= 1e12, "NVLink 100..1000 GB/s per direction")
		check(p.Interconnect.LatencyS > 0 && p.Interconnect.LatencyS <= 5e-6, "NVLink latency up to 5 µs")
		check(p.Interconnect.DomainSize >= p.GPU.PerNode, "NVLink domain covers the node")
	}
	if p.Network.Kind == NetworkNone {
		check(p.Nodes == 1, "no network only for one node")
	} else {
		bw := p.Network.NodeNetworkBytesPerS()
		check(bw >= 5e10 && bw <= 1e12, "network 50..1000 GB/s per node")
		check(p.Network.LatencyS > 0 && p.Network.LatencyS <= 2e-5, "network latency up to 20 µs")
	}
	return bad
}

func TestBuiltinReturnsCopy(t *testing.T) {
	t.Parallel()
	p, err := Builtin("nebius-h100-8")
	if err != nil {
		t.Fatal(err)
	}
	p.Nodes = 99
	p.GPU.TFLOPS[PrecisionBF16] = 1
	again, err := Builtin("nebius-h100-8")
	if err != nil {
		t.Fatal(err)
	}
	if again.Nodes != 1 || again.GPU.TFLOPS[PrecisionBF16] != 989 {
		t.Errorf("changing a returned profile changed the built-in: nodes %d, bf16 %g", again.Nodes, again.GPU.TFLOPS[PrecisionBF16])
	}
}

func TestBuiltinUnknown(t *testing.T) {
	t.Parallel()
	if p, err := Builtin("nebius-h100"); err == nil {
		t.Errorf("Builtin(%q) = %+v, want an error", "nebius-h100", p)
	}
}

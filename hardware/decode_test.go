package hardware

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// profileFileSchema reads a file of hardware blocks, as the built-ins are.
var profileFileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "hardware", LabelNames: []string{"name"}}},
}

// parseHardware parses src, which holds one hardware block, and returns
// that block's label and body.
func parseHardware(t *testing.T, src string) (string, hcl.Body) {
	t.Helper()
	file, diags := hclsyntax.ParseConfig([]byte(src), "test.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("test source does not parse: %s", diags)
	}
	content, diags := file.Body.Content(profileFileSchema)
	if diags.HasErrors() || len(content.Blocks) != 1 {
		t.Fatalf("test source needs exactly one hardware block: %s", diags)
	}
	return content.Blocks[0].Labels[0], content.Blocks[0].Body
}

func mustBuiltin(t *testing.T, name string) *Profile {
	t.Helper()
	p, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecodeOverrides(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		src  string
		ctx  *hcl.EvalContext
		want func(p *Profile) // changes to the built-in
		base string
	}{
		"profile alone": {
			src:  `hardware "cluster" { profile = "nebius-h100-8" }`,
			base: "nebius-h100-8",
			want: func(p *Profile) {},
		},
		"top-level and nested fields": {
			src: `hardware "cluster" {
  profile = "nebius-h100-8"
  nodes   = 2
  gpu {
    memory_gib = 94
    tflops {
      fp8 = 0
    }
  }
  network {
    nic_gbit = 200
  }
}`,
			base: "nebius-h100-8",
			want: func(p *Profile) {
				p.Nodes = 2
				p.GPU.MemoryBytes = 94 << 30
				delete(p.GPU.TFLOPS, PrecisionFP8)
				p.Network.GbpsPerNIC = 200
			},
		},
		"from variables": {
			src: `hardware "cluster" {
  profile = var.profile
  nodes   = var.nodes
  cost_per_gpu_hour = var.price
}`,
			ctx: &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{
				"profile": cty.StringVal("dell-xe9780-b300"),
				"nodes":   cty.NumberIntVal(2).Mark("sensitive"),
				"price":   cty.NullVal(cty.Number),
			})}},
			base: "dell-xe9780-b300",
			want: func(p *Profile) { p.Nodes = 2 },
		},
		"network added to a single machine": {
			src: `hardware "lab" {
  profile = "h200-x4"
  nodes   = 2
  network {
    kind          = "roce"
    nics_per_node = 4
    nic_gbit      = 400
    latency_us    = 3
  }
}`,
			base: "h200-x4",
			want: func(p *Profile) {
				p.Nodes = 2
				p.Network = Network{Kind: NetworkRoCE, NICsPerNode: 4, GbpsPerNIC: 400, LatencyS: 3e-6}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			label, body := parseHardware(t, tc.src)
			got, diags := Decode(label, body, tc.ctx)
			if diags.HasErrors() {
				t.Fatalf("Decode: %s", diags)
			}
			want := mustBuiltin(t, tc.base)
			want.Name, want.BaseProfile = label, tc.base
			tc.want(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decode mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

const inlineSrc = `hardware "rack" {
  description       = "two test nodes"
  source            = "made up for a test"
  nodes             = 2
  cost_per_gpu_hour = 2.5
  gpu {
    model              = "H100 80GB SXM"
    count              = 8
    memory_gib         = 80
    compute_capability = "9.0"
    tflops {
      bf16 = 989
      fp8  = 1979
    }
    hbm_tbps  = 3.35
    tdp_watts = 700
  }
  interconnect {
    kind           = "nvlink4"
    bandwidth_gbps = 450
    latency_us     = 3
    domain_size    = 8
  }
  network {
    kind           = "ib"
    nics_per_node  = 8
    nic_gbit       = 400
    gpudirect_rdma = true
    latency_us     = 5
  }
}`

func TestDecodeInline(t *testing.T) {
	t.Parallel()
	label, body := parseHardware(t, inlineSrc)
	got, diags := Decode(label, body, nil)
	if diags.HasErrors() {
		t.Fatalf("Decode: %s", diags)
	}
	want := &Profile{
		Name:        "rack",
		Description: "two test nodes",
		Source:      "made up for a test",
		Nodes:       2,
		GPU: GPU{
			Model:             "H100 80GB SXM",
			PerNode:           8,
			MemoryBytes:       80 << 30,
			TFLOPS:            map[string]float64{PrecisionBF16: 989, PrecisionFP8: 1979},
			HBMBytesPerS:      3.35e12,
			TDPWatts:          700,
			ComputeCapability: "9.0",
		},
		Interconnect:   Interconnect{Kind: InterconnectNVLink4, BytesPerS: 450e9, LatencyS: 3e-6, DomainSize: 8},
		Network:        Network{Kind: NetworkIB, NICsPerNode: 8, GbpsPerNIC: 400, GPUDirectRDMA: true, LatencyS: 5e-6},
		CostPerGPUHour: 2.5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode mismatch (-want +got):\n%s", diff)
	}
}

// problem is a diagnostic reduced to what the invalid cases assert.
type problem struct {
	Summary string
	At      string // line:column of the Subject's start
}

func problems(diags hcl.Diagnostics) []problem {
	var out []problem
	for _, d := range diags {
		at := "no subject"
		if d.Subject != nil {
			at = fmt.Sprintf("%d:%d", d.Subject.Start.Line, d.Subject.Start.Column)
		}
		out = append(out, problem{d.Summary, at})
	}
	return out
}

func TestDecodeInvalid(t *testing.T) {
	t.Parallel()
	unknown := &hcl.EvalContext{Variables: map[string]cty.Value{
		"var": cty.ObjectVal(map[string]cty.Value{"nodes": cty.UnknownVal(cty.Number)}),
	}}
	tests := map[string]struct {
		src  string
		ctx  *hcl.EvalContext
		want []problem
	}{
		"unknown profile": {
			src:  "hardware \"x\" {\n  profile = \"nebius-h100\"\n}",
			want: []problem{{"Unknown hardware profile", "2:13"}},
		},
		"unknown argument": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  node = 2\n}",
			want: []problem{{"Unsupported argument", "3:3"}},
		},
		"unknown nested argument": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  gpu {\n    tflops {\n      bf61 = 1\n    }\n  }\n}",
			want: []problem{{"Unsupported argument", "5:7"}},
		},
		"zero nodes": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  nodes   = 0\n}",
			want: []problem{{"Invalid value for nodes", "3:13"}},
		},
		"fractional gpu count": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  gpu {\n    count = 1.5\n  }\n}",
			want: []problem{{"Invalid value for gpu.count", "4:13"}},
		},
		"network kind not in the set": {
			src:  "hardware \"x\" {\n  profile = \"nebius-h100-8\"\n  network {\n    kind = \"roce2\"\n  }\n}",
			want: []problem{{"Invalid value for network.kind", "4:12"}},
		},
		"zero domain size": {
			src:  "hardware \"x\" {\n  profile = \"nebius-h100-8\"\n  interconnect {\n    domain_size = 0\n  }\n}",
			want: []problem{{"Invalid value for interconnect.domain_size", "4:19"}},
		},
		"wrong type": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  nodes   = \"two\"\n}",
			want: []problem{{"Incorrect attribute value type", "3:13"}},
		},
		"bad compute capability": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  gpu { compute_capability = \"9\" }\n}",
			want: []problem{{"Invalid value for gpu.compute_capability", "3:30"}},
		},
		"duplicate block": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  gpu { count = 1 }\n  gpu { count = 2 }\n}",
			want: []problem{{"Duplicate gpu block", "4:3"}},
		},
		"several nodes without a network": {
			src:  "hardware \"x\" {\n  profile = \"h200-x4\"\n  nodes   = 2\n}",
			want: []problem{{"Several nodes need a network", "3:13"}},
		},
		"domain does not tile the node": {
			src:  "hardware \"x\" {\n  profile = \"nebius-h100-8\"\n  interconnect { domain_size = 3 }\n}",
			want: []problem{{"NVLink domain does not fit the nodes", "3:32"}},
		},
		"domain left larger than the node": {
			src:  "hardware \"x\" {\n  profile = \"nebius-h100-8\"\n  gpu {\n    count = 4\n  }\n}",
			want: []problem{{"NVLink domain larger than the hardware", "4:13"}},
		},
		"part of a rack": {
			src:  "hardware \"x\" {\n  profile = \"gb200-nvl72\"\n  nodes   = 9\n}",
			want: []problem{{"NVLink domain larger than the hardware", "3:13"}},
		},
		"network kind needs its figures": {
			src:  "hardware \"x\" {\n  profile = \"h200-x4\"\n  network {\n    kind = \"ib\"\n  }\n}",
			want: []problem{{"Missing required argument", "3:3"}, {"Missing required argument", "3:3"}, {"Missing required argument", "3:3"}},
		},
		"variable without a context": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  nodes   = var.nodes\n}",
			want: []problem{{"Variables not allowed", "3:13"}},
		},
		"value known only at apply": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  nodes   = var.nodes\n}",
			ctx:  unknown,
			want: []problem{{"Value not known when planning", "3:13"}},
		},
		"inline without memory": {
			src: `hardware "x" {
  nodes = 1
  gpu {
    model    = "H100"
    count    = 1
    hbm_tbps = 3.35
    tflops {
      bf16 = 989
    }
  }
  interconnect {
    kind        = "none"
    domain_size = 1
  }
  network {
    kind = "none"
  }
}`,
			want: []problem{{"Missing required argument", "3:3"}},
		},
		"inline with a bad kind is not also missing": {
			src:  "hardware \"x\" {\n  nodes = 1\n  gpu {\n    model = \"H100\"\n    count = 1\n    memory_gib = 80\n    hbm_tbps = 3.35\n    tflops { bf16 = 989 }\n  }\n  interconnect {\n    kind = \"none\"\n    domain_size = 1\n  }\n  network {\n    kind = \"infiniband\"\n    nics_per_node = 1\n    nic_gbit = 400\n    latency_us = 2\n  }\n}",
			want: []problem{{"Invalid value for network.kind", "15:12"}},
		},
		"inline without blocks": {
			src:  "hardware \"x\" {\n  nodes = 1\n}",
			want: []problem{{"Missing gpu block", "1:14"}, {"Missing interconnect block", "1:14"}, {"Missing network block", "1:14"}},
		},
		"inline with no rating": {
			src: `hardware "x" {
  nodes = 1
  gpu {
    model      = "H100"
    count      = 1
    memory_gib = 80
    hbm_tbps   = 3.35
  }
  interconnect {
    kind        = "none"
    domain_size = 1
  }
  network {
    kind = "none"
  }
}`,
			want: []problem{{"GPU has no TFLOP/s rating", "3:3"}},
		},
		"every value error at once": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  nodes = -1\n  gpu {\n    memory_gib = -80\n    hbm_tbps = 0\n  }\n}",
			want: []problem{{"Invalid value for nodes", "3:11"}, {"Invalid value for gpu.memory_gib", "5:18"}, {"Invalid value for gpu.hbm_tbps", "6:16"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			label, body := parseHardware(t, tc.src)
			got, diags := Decode(label, body, tc.ctx)
			if got != nil {
				t.Errorf("Decode returned a profile despite errors: %+v", got)
			}
			if diff := cmp.Diff(tc.want, problems(diags)); diff != "" {
				t.Errorf("diagnostics mismatch (-want +got):\n%s\nall: %s", diff, diags)
			}
		})
	}
}

// TestDecodeDetails pins the wording of the messages that carry a
// suggestion, since users act on them.
func TestDecodeDetails(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		src  string
		want string
	}{
		"profile suggestion": {
			src: `hardware "x" { profile = "nebius-h100" }`,
			want: `There is no built-in hardware profile named "nebius-h100". Did you mean "nebius-h100-8"? ` +
				`Built-in profiles: "dell-xe9780-b300", "dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "gb200-nvl72", "gh200", "h100-x1", "h200-x1", "h200-x2", "h200-x4", "hgx-b200-8", "hgx-h200-8", "nebius-h100-8".`,
		},
		"kind suggestion": {
			src:  "hardware \"x\" {\n  profile = \"nebius-h100-8\"\n  network {\n    kind = \"roce2\"\n  }\n}",
			want: `network.kind must be one of "ib", "roce", "ethernet", "none"; got "roce2". Did you mean "roce"?`,
		},
		"argument suggestion from hcl": {
			src:  "hardware \"x\" {\n  profile = \"h100-x1\"\n  node = 2\n}",
			want: `An argument named "node" is not expected here. Did you mean "nodes"?`,
		},
		"missing argument names it": {
			src:  "hardware \"x\" {\n  profile = \"h200-x4\"\n  network {\n    kind = \"ib\"\n    nic_gbit = 400\n    latency_us = 2\n  }\n}",
			want: `The argument "network.nics_per_node" is required when network kind is "ib".`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			label, body := parseHardware(t, tc.src)
			_, diags := Decode(label, body, nil)
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %d: %s", len(diags), diags)
			}
			if diff := cmp.Diff(tc.want, diags[0].Detail); diff != "" {
				t.Errorf("detail mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	label, body := parseHardware(t, `hardware "cluster" {
  profile = "nebius-h100-8"
  nodes   = 2
}`)
	p, diags := Decode(label, body, nil)
	if diags.HasErrors() {
		t.Fatalf("Decode: %s", diags)
	}
	want := cty.ObjectVal(map[string]cty.Value{
		"name":             cty.StringVal("cluster"),
		"nodes":            cty.NumberIntVal(2),
		"gpus_per_node":    cty.NumberIntVal(8),
		"total_gpus":       cty.NumberIntVal(16),
		"gpu_model":        cty.StringVal("H100 80GB SXM"),
		"gpu_memory_bytes": cty.NumberIntVal(80 << 30),
		"tflops": cty.MapVal(map[string]cty.Value{
			"bf16": cty.NumberIntVal(989), "fp16": cty.NumberIntVal(989),
			"fp8": cty.NumberIntVal(1979), "tf32": cty.NumberIntVal(494),
		}),
		"hbm_bytes_per_s":    cty.NumberFloatVal(3.35e12),
		"interconnect_kind":  cty.StringVal("nvlink4"),
		"nvlink_domain_size": cty.NumberIntVal(8),
		"nvlink_multicast":   cty.True,
		"network_kind":       cty.StringVal("ib"),
		"cost_per_gpu_hour":  cty.NumberFloatVal(2.95),
	})
	got := p.Value()
	if !got.Type().Equals(ValueType()) {
		t.Errorf("Value() type %#v differs from ValueType() %#v", got.Type(), ValueType())
	}
	if !got.RawEquals(want) {
		t.Errorf("Value() =\n%#v\nwant\n%#v", got, want)
	}
}

func TestValueTypeForEveryBuiltin(t *testing.T) {
	t.Parallel()
	for _, name := range BuiltinNames() {
		if got := mustBuiltin(t, name).Value().Type(); !got.Equals(ValueType()) {
			t.Errorf("%s: Value() type %#v differs from ValueType()", name, got)
		}
	}
}

// TestBuiltinMayNotChain: a built-in file naming a profile would make the
// loader call itself; it is refused with a diagnostic instead.
func TestBuiltinMayNotChain(t *testing.T) {
	t.Parallel()
	_, body := parseHardware(t, "hardware \"x\" {\n  profile = \"h100-x1\"\n}")
	p, _, diags := decode("x", body, nil, nil)
	want := []problem{{"Profile not allowed here", "2:3"}}
	if diff := cmp.Diff(want, problems(diags)); diff != "" || p != nil {
		t.Errorf("profile %v; diagnostics mismatch (-want +got):\n%s", p, diff)
	}
}

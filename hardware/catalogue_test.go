package hardware

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDatasheetNames(t *testing.T) {
	t.Parallel()
	want := []string{"a100-sxm4-40gb", "a100-sxm4-80gb", "b200-gb200", "b200-hgx", "b300-xe9780", "gh200", "h100-sxm", "h200-sxm"}
	if diff := cmp.Diff(want, DatasheetNames()); diff != "" {
		t.Errorf("DatasheetNames() mismatch (-want +got):\n%s", diff)
	}
}

// TestDatasheets loads every catalogue entry and checks that each cites its
// source and that every built-in profile takes its GPU from the catalogue,
// so that a GPU's figures are written in one place.
func TestDatasheets(t *testing.T) {
	t.Parallel()
	if _, err := datasheets.all(); err != nil {
		t.Fatalf("embedded GPU catalogue does not load: %v", err)
	}
	for _, name := range DatasheetNames() {
		src, err := datasheetFiles.ReadFile("gpus/" + name + ".hcl")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(src, []byte("# Source: ")) {
			t.Errorf("gpus/%s.hcl does not start with a '# Source: ' comment", name)
		}
	}
	for _, name := range BuiltinNames() {
		if p := mustBuiltin(t, name); p.GPU.Datasheet == "" {
			t.Errorf("profile %s declares its GPU's figures itself; name a datasheet from gpus/", name)
		}
	}
}

// TestDatasheetSharedByProfiles: the H200's figures come from one entry,
// whatever profile uses them, overrides aside.
func TestDatasheetSharedByProfiles(t *testing.T) {
	t.Parallel()
	sheet, err := Datasheet("h200-sxm")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"h200-x1", "h200-x2", "h200-x4", "hgx-h200-8"} {
		got := mustBuiltin(t, name).GPU
		want := sheet.clone()
		want.PerNode = got.PerNode
		if name != "hgx-h200-8" {
			want.MemoryBytes = 143771 << 20 // the virtual machines' nvidia-smi figure
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: GPU differs from the h200-sxm datasheet (-want +got):\n%s", name, diff)
		}
	}
}

func TestDecodeDatasheet(t *testing.T) {
	t.Parallel()
	h100, err := Datasheet("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		src  string
		want func() *Profile
	}{
		"inline profile with a datasheet": {
			src: `hardware "rack" {
  nodes = 2
  gpu {
    datasheet = "h100-sxm"
    count     = 8
  }
  interconnect {
    kind           = "nvlink4"
    bandwidth_gbps = 450
    latency_us     = 1
    domain_size    = 8
  }
  network {
    kind          = "ib"
    nics_per_node = 8
    nic_gbit      = 400
    latency_us    = 2
  }
}`,
			want: func() *Profile {
				gpu := h100.clone()
				gpu.PerNode = 8
				return &Profile{Name: "rack", Nodes: 2, GPU: gpu,
					Interconnect: Interconnect{Kind: InterconnectNVLink4, BytesPerS: 450e9, LatencyS: 1e-6, DomainSize: 8},
					Network:      Network{Kind: NetworkIB, NICsPerNode: 8, GbpsPerNIC: 400, LatencyS: 2e-6}}
			},
		},
		"datasheet overridden by the block's own figures": {
			src: `hardware "lab" {
  profile = "nebius-h100-8"
  gpu {
    datasheet  = "h100-sxm"
    memory_gib = 94
    tflops {
      fp8 = 0
    }
  }
}`,
			want: func() *Profile {
				p := mustBuiltin(t, "nebius-h100-8")
				p.Name, p.BaseProfile = "lab", "nebius-h100-8"
				p.GPU.MemoryBytes = 94 << 30
				delete(p.GPU.TFLOPS, PrecisionFP8)
				return p
			},
		},
		"another GPU in a profile's machine": {
			src: `hardware "lab" {
  profile = "hgx-h200-8"
  gpu {
    datasheet = "b200-hgx"
  }
}`,
			want: func() *Profile {
				p := mustBuiltin(t, "hgx-h200-8")
				p.Name, p.BaseProfile = "lab", "hgx-h200-8"
				sheet, err := Datasheet("b200-hgx")
				if err != nil {
					t.Fatal(err)
				}
				sheet.PerNode = 8
				p.GPU = sheet
				return p
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			label, body := parseHardware(t, tc.src)
			got, diags := Decode(label, body, nil)
			if diags.HasErrors() {
				t.Fatalf("Decode: %s", diags)
			}
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("Decode mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeDatasheetInvalid(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		src        string
		want       []problem
		wantDetail string
	}{
		"misspelt datasheet": {
			src:        "hardware \"x\" {\n  profile = \"h200-x4\"\n  gpu {\n    datasheet = \"h200-sxn\"\n  }\n}",
			want:       []problem{{"Unknown GPU datasheet", "4:17"}},
			wantDetail: `Did you mean "h200-sxm"?`,
		},
		"datasheet far from any name": {
			src:        "hardware \"x\" {\n  profile = \"h200-x4\"\n  gpu {\n    datasheet = \"mi300x\"\n  }\n}",
			want:       []problem{{"Unknown GPU datasheet", "4:17"}},
			wantDetail: `Datasheets: "a100-sxm4-40gb", "a100-sxm4-80gb", "b200-gb200", "b200-hgx", "b300-xe9780", "gh200", "h100-sxm", "h200-sxm".`,
		},
		"datasheet not a string": {
			src:  "hardware \"x\" {\n  profile = \"h200-x4\"\n  gpu {\n    datasheet = [1]\n  }\n}",
			want: []problem{{"Incorrect attribute value type", "4:17"}},
		},
		"datasheet outside the gpu block": {
			src:  "hardware \"x\" {\n  profile = \"h200-x4\"\n  datasheet = \"h200-sxm\"\n}",
			want: []problem{{"Unsupported argument", "3:3"}},
		},
		"inline datasheet still needs a count": {
			src:  "hardware \"x\" {\n  nodes = 1\n  gpu {\n    datasheet = \"h200-sxm\"\n  }\n  interconnect {\n    kind = \"none\"\n    domain_size = 1\n  }\n  network {\n    kind = \"none\"\n  }\n}",
			want: []problem{{"Missing required argument", "3:3"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			label, body := parseHardware(t, tc.src)
			p, diags := Decode(label, body, nil)
			if p != nil {
				t.Errorf("Decode returned a profile despite errors: %+v", p)
			}
			if diff := cmp.Diff(tc.want, problems(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\nall: %s", diff, diags)
			}
			if tc.wantDetail != "" && (len(diags) == 0 || !strings.Contains(diags[0].Detail, tc.wantDetail)) {
				t.Errorf("detail %q lacks %q", diags, tc.wantDetail)
			}
		})
	}
}

package hardware

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files and generated docs")

const docsPath = "../docs/hardware.md"

// TestDocsTable keeps the generated tables of docs/hardware.md, the
// built-in profiles and the GPU catalogue, in step with the embedded files.
func TestDocsTable(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []struct {
		marker string
		want   string
	}{
		{"builtin-table", builtinTable(t)},
		{"datasheet-table", datasheetTable(t)},
	} {
		begin, end := "<!-- "+table.marker+":begin -->\n", "<!-- "+table.marker+":end -->"
		start, stop := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
		if start < 0 || stop < start {
			t.Fatalf("%s lacks the %q and %q markers", docsPath, begin, end)
		}
		start += len(begin)
		if *update {
			doc = append(append(append([]byte{}, doc[:start]...), table.want...), doc[stop:]...)
			continue
		}
		if diff := cmp.Diff(table.want, string(doc[start:stop])); diff != "" {
			t.Errorf("%s: %s is stale; run go test ./hardware -run TestDocsTable -update (-want +got):\n%s", docsPath, table.marker, diff)
		}
	}
	if *update {
		if err := os.WriteFile(docsPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func builtinTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| name | GPUs | datasheet | GiB | bf16 | fp8 | NVLink GB/s (domain) | multicast | network | source |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, name := range BuiltinNames() {
		p := mustBuiltin(t, name)
		fmt.Fprintf(&b, "| %s | %d × %d %s | %s | %.4g | %g | %g | %s | %s | %s | %s |\n",
			name, p.Nodes, p.GPU.PerNode, p.GPU.Model, p.GPU.Datasheet,
			float64(p.GPU.MemoryBytes)/(1<<30),
			p.GPU.TFLOPS[PrecisionBF16], p.GPU.TFLOPS[PrecisionFP8],
			linkCell(p.Interconnect), multicastCell(p.Interconnect), networkCell(p.Network), p.Source)
	}
	return b.String()
}

func datasheetTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| datasheet | model | GiB | HBM TB/s | bf16 | fp16 | fp8 | tf32 | W | compute capability |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, name := range DatasheetNames() {
		g, err := Datasheet(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "| %s | %s | %.4g | %g | %g | %g | %g | %g | %g | %s |\n",
			name, g.Model, float64(g.MemoryBytes)/(1<<30), g.HBMBytesPerS/1e12,
			g.TFLOPS[PrecisionBF16], g.TFLOPS[PrecisionFP16], g.TFLOPS[PrecisionFP8], g.TFLOPS[PrecisionTF32],
			g.TDPWatts, g.ComputeCapability)
	}
	return b.String()
}

func multicastCell(i Interconnect) string {
	if i.MulticastOff {
		return "off"
	}
	return "allowed"
}

func linkCell(i Interconnect) string {
	if i.Kind == InterconnectNone {
		return "none"
	}
	return fmt.Sprintf("%s %g (%d)", i.Kind, i.BytesPerS/1e9, i.DomainSize)
}

func networkCell(n Network) string {
	if n.Kind == NetworkNone {
		return "none"
	}
	return fmt.Sprintf("%s %d × %gG", n.Kind, n.NICsPerNode, n.GbpsPerNIC)
}

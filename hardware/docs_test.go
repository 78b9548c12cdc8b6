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

const (
	docsPath   = "../docs/hardware.md"
	tableBegin = "<!-- builtin-table:begin -->\n"
	tableEnd   = "<!-- builtin-table:end -->"
)

// TestDocsTable keeps the built-in table in docs/hardware.md in step with
// the embedded profiles.
func TestDocsTable(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(doc, []byte(tableBegin))
	end := bytes.Index(doc, []byte(tableEnd))
	if start < 0 || end < start {
		t.Fatalf("%s lacks the %q and %q markers", docsPath, tableBegin, tableEnd)
	}
	start += len(tableBegin)
	want := builtinTable(t)
	if *update {
		out := append(append(append([]byte{}, doc[:start]...), want...), doc[end:]...)
		if err := os.WriteFile(docsPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, string(doc[start:end])); diff != "" {
		t.Errorf("%s is stale; run go test ./hardware -run TestDocsTable -update (-want +got):\n%s", docsPath, diff)
	}
}

func builtinTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| name | GPUs | GiB | bf16 | fp8 | NVLink GB/s (domain) | network | source |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, name := range BuiltinNames() {
		p := mustBuiltin(t, name)
		fmt.Fprintf(&b, "| %s | %d × %d %s | %.4g | %g | %g | %s | %s | %s |\n",
			name, p.Nodes, p.GPU.PerNode, p.GPU.Model,
			float64(p.GPU.MemoryBytes)/(1<<30),
			p.GPU.TFLOPS[PrecisionBF16], p.GPU.TFLOPS[PrecisionFP8],
			linkCell(p.Interconnect), networkCell(p.Network), p.Source)
	}
	return b.String()
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

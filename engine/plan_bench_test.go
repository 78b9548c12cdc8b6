package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/builtin"
)

// builtinPlugins is the plugin set plan uses: every built-in, in-process.
func builtinPlugins(b testing.TB) *engine.PluginSet {
	b.Helper()
	var providers []api.Provider
	for _, name := range builtin.Names() {
		p, _ := builtin.New(name)
		providers = append(providers, p)
	}
	set, err := engine.NewPluginSet(context.Background(), providers...)
	if err != nil {
		b.Fatal(err)
	}
	return set
}

func benchmarkPlan(b *testing.B, path string) {
	plugins := builtinPlugins(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		w, diags := engine.LoadWorkload(path, dsl.Inputs{})
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		if _, diags := engine.BuildPlan(ctx, w, engine.PlanOptions{Plugins: plugins}); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

// BenchmarkPlan7BPretrain plans workloads/7b-pretrain.hcl from its files:
// parse, variables, hardware, stages, placement and estimates (target:
// under 20 ms).
func BenchmarkPlan7BPretrain(b *testing.B) {
	benchmarkPlan(b, "../workloads/7b-pretrain.hcl")
}

// BenchmarkPlan500Stages plans a generated workload of 500 exec stages,
// each reading the previous stage's output and every tenth depending on
// the first (target: under 500 ms).
func BenchmarkPlan500Stages(b *testing.B) {
	path := filepath.Join(b.TempDir(), "wide.hcl")
	if err := os.WriteFile(path, []byte(generatedWorkload(500)), 0o644); err != nil {
		b.Fatal(err)
	}
	benchmarkPlan(b, path)
}

func generatedWorkload(n int) string {
	var sb strings.Builder
	sb.WriteString("variable \"greeting\" {\n  default = \"hello\"\n}\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "stage \"exec\" \"s%d\" {\n", i)
		switch {
		case i == 0:
			sb.WriteString("  command = [\"echo\", var.greeting]\n")
		default:
			fmt.Fprintf(&sb, "  command = [\"echo\", stage.exec.s%d.outputs.stdout_tail]\n", i-1)
		}
		if i > 0 && i%10 == 0 {
			sb.WriteString("  depends_on = [stage.exec.s0]\n")
		}
		sb.WriteString("}\n\n")
	}
	return sb.String()
}

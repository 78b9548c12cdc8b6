package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/plugins/builtin"
	"github.com/gpuflow/gpuflow/plugins/client"
)

// benchStages is the number of exec stages the apply benchmarks run.
const benchStages = 200

// execWorkload writes n exec stages running `true`: as a chain, each
// after the one before, or as a fan-out, all after the first.
func execWorkload(n int, fanout bool) string {
	var b strings.Builder
	b.WriteString("stage \"exec\" \"s0\" {\n  command = [\"true\"]\n}\n")
	for i := 1; i < n; i++ {
		after := i - 1
		if fanout {
			after = 0
		}
		fmt.Fprintf(&b, "stage \"exec\" \"s%d\" {\n  depends_on = [stage.exec.s%d]\n  command    = [\"true\"]\n}\n", i, after)
	}
	return b.String()
}

// BenchmarkApplyExec runs `gpuflow apply -auto-approve` on 200 exec
// stages from empty state, the whole command as a user runs it. Besides
// the time per run it reports the mean time per stage as state records it
// (start of the plugin process to its end), which is the plugin start-up
// cost of a stage that runs `true`.
func BenchmarkApplyExec(b *testing.B) {
	bin, err := gpuflowBinary()
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []string{"chain", "fanout"} {
		b.Run(fmt.Sprintf("%s-%d", shape, benchStages), func(b *testing.B) {
			dir := b.TempDir()
			src := execWorkload(benchStages, shape == "fanout")
			if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
				b.Fatal(err)
			}
			var stageTime time.Duration
			runs := 0
			for b.Loop() {
				b.StopTimer()
				if err := os.RemoveAll(filepath.Join(dir, ".gpuflow")); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if out, err := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".").CombinedOutput(); err != nil {
					b.Fatalf("apply: %v\n%s", err, out)
				}
				b.StopTimer()
				stageTime += meanStageTime(b, filepath.Join(dir, ".gpuflow", "state", "workload.json"))
				runs++
				b.StartTimer()
			}
			b.ReportMetric(float64(stageTime.Microseconds())/1e3/float64(runs), "ms/stage")
		})
	}
}

func meanStageTime(b *testing.B, path string) time.Duration {
	st, err := state.Read(path)
	if err != nil {
		b.Fatal(err)
	}
	if len(st.Stages) != benchStages {
		b.Fatalf("%d stages recorded, want %d", len(st.Stages), benchStages)
	}
	var total time.Duration
	for _, s := range st.Stages {
		if s.Status != state.StatusSucceeded {
			b.Fatalf("%s %s: %s", s.Address, s.Status, s.Error)
		}
		total += s.EndedAt.Sub(s.StartedAt)
	}
	return total / time.Duration(len(st.Stages))
}

// BenchmarkPluginStart starts the built-in exec plugin as a process,
// fetches its schema (the handshake's last step) and closes it: the fixed
// cost apply pays per stage.
func BenchmarkPluginStart(b *testing.B) {
	bin, err := gpuflowBinary()
	if err != nil {
		b.Fatal(err)
	}
	m, err := client.NewManager(client.Options{Executable: bin, Builtins: builtin.Names(), Dirs: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	for b.Loop() {
		p, err := m.Start(ctx, "exec")
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

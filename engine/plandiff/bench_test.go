package plandiff

import "testing"

// BenchmarkCompare diffs two plans of a 7B pre-train whose layout swaps
// tp and dp, with a data prep ahead of it: the work of one gpuflow diff
// once both plans are built.
func BenchmarkCompare(b *testing.B) {
	swapped := base7b()
	swapped.layout.TP, swapped.layout.DP = 4, 2
	prep := func(inputs string) map[string]any {
		return map[string]any{"inputs": []string{inputs}, "format": "jsonl"}
	}
	old := planOf(plainStage("data_prep.corpus", prep("a/*.jsonl")), trainingStage(b, base7b()))
	new := planOf(plainStage("data_prep.corpus", prep("b/*.jsonl")), trainingStage(b, swapped))
	b.ReportAllocs()
	for b.Loop() {
		if d := Compare(old, new); d.Summary.Replaced != 2 {
			b.Fatalf("replaced %d stages, want 2", d.Summary.Replaced)
		}
	}
}

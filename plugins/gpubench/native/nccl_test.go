//go:build cgo && linux

package native

import (
	"testing"

	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

func TestBatchIters(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		spec node.CollectiveSpec
		warm float64
		want int
	}{
		"large size keeps iters": {node.CollectiveSpec{Iters: 20, Warmup: 5, MinSeconds: 0.05}, 5 * 4.5e-3, 20},
		"small size stretches":   {node.CollectiveSpec{Iters: 20, Warmup: 5, MinSeconds: 0.05}, 5 * 20e-6, 2500},
		"no minimum":             {node.CollectiveSpec{Iters: 20, Warmup: 5}, 5 * 20e-6, 20},
		"no warm-up to go by":    {node.CollectiveSpec{Iters: 20, MinSeconds: 0.05}, 0, 20},
		"bounded":                {node.CollectiveSpec{Iters: 20, Warmup: 5, MinSeconds: 10}, 5 * 1e-6, maxIters},
		"zero iters means one":   {node.CollectiveSpec{Warmup: 1}, 1, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := batchIters(tc.spec, tc.warm); got != tc.want {
				t.Errorf("batchIters = %d, want %d", got, tc.want)
			}
		})
	}
}

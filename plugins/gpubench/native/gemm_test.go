//go:build cgo && linux

package native

import (
	"math"
	"testing"
)

func TestRelErr(t *testing.T) {
	t.Parallel()
	nan := float32(math.NaN())
	tests := map[string]struct {
		pairs []float32
		want  float64
	}{
		"exact":          {[]float32{1, 1, -2, -2}, 0},
		"3-4-5":          {[]float32{3, 0, 0, 4}, 5.0 / 4},
		"unwritten NaN":  {[]float32{nan, 1}, math.Inf(1)},
		"zero reference": {[]float32{1, 0}, math.Inf(1)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := relErr(tc.pairs); got != tc.want {
				t.Errorf("relErr = %v, want %v", got, tc.want)
			}
		})
	}
}

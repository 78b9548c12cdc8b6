package stats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMedian(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in   []float64
		want float64
	}{
		"none":       {nil, 0},
		"one":        {[]float64{3}, 3},
		"odd count":  {[]float64{5, 1, 3}, 3},
		"even count": {[]float64{4, 1, 3, 2}, 2.5},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := append([]float64(nil), tc.in...)
			if got := Median(in); got != tc.want {
				t.Errorf("Median(%v) = %g, want %g", tc.in, got, tc.want)
			}
			if diff := cmp.Diff(tc.in, in); diff != "" {
				t.Errorf("Median changed its input (-was +now):\n%s", diff)
			}
		})
	}
}

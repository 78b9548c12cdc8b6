package stats

import "slices"

// Median is the middle of xs (the mean of the two middle values for an
// even count), zero for none; xs is left as it was.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

package main

import "testing"

// TestFormatAmount checks costs and energies: two significant digits
// below 10, whole numbers from 10 up.
func TestFormatAmount(t *testing.T) {
	t.Parallel()
	tests := map[float64]string{
		0:      "0",
		0.0042: "0.0042",
		0.93:   "0.93",
		2.4:    "2.4",
		9.96:   "10",
		12.6:   "13",
		1234.4: "1234",
	}
	for v, want := range tests {
		if got := formatAmount(v); got != want {
			t.Errorf("formatAmount(%v) = %q, want %q", v, got, want)
		}
	}
}

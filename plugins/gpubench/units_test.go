package gpubench

import "testing"

func TestFormatBytes(t *testing.T) {
	t.Parallel()
	tests := map[int64]string{1 << 30: "1 GiB", 3 << 29: "1.50 GiB", 4096: "4 KiB", 100: "100 B", 1 << 40: "1 TiB"}
	for in, want := range tests {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

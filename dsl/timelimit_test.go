package dsl

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseTimeLimit(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in   string
		want time.Duration // 0: an error
	}{
		"go hours":             {"4h", 4 * time.Hour},
		"go minutes":           {"30m", 30 * time.Minute},
		"go mixed":             {"1h30m", 90 * time.Minute},
		"minutes":              {"90", 90 * time.Minute},
		"minutes seconds":      {"30:00", 30 * time.Minute},
		"hours minutes secs":   {"02:00:00", 2 * time.Hour},
		"many hours":           {"72:00:00", 72 * time.Hour},
		"days hours":           {"1-12", 36 * time.Hour},
		"days hours minutes":   {"2-00:30", 48*time.Hour + 30*time.Minute},
		"days full":            {"1-01:01:00", 25*time.Hour + time.Minute},
		"go seconds":           {"90s", 0},
		"seconds part":         {"30:30", 0},
		"under a minute":       {"0:30", 0},
		"zero":                 {"0", 0},
		"minutes out of range": {"1:60:00", 0},
		"hours out of range":   {"1-24", 0},
		"four fields":          {"1:00:00:00", 0},
		"days four fields":     {"1-1:00:00:00", 0},
		"empty field":          {"1::00", 0},
		"empty":                {"", 0},
		"words":                {"4 hours", 0},
		"negative":             {"-1", 0},
		"sign in field":        {"+5", 0},
		"huge":                 {"99999999", 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := parseTimeLimit(tc.in)
			if tc.want == 0 {
				if err == nil {
					t.Errorf("parseTimeLimit(%q) = %s, want an error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseTimeLimit(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseTimeLimit(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

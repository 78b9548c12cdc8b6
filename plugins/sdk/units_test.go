package sdk

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in   string
		want int64
		// wantErr is a part of the error's message.
		wantErr string
	}{
		"binary":                {in: "4GiB", want: 4 << 30},
		"spaced":                {in: "512 MiB", want: 512 << 20},
		"decimal":               {in: "8GB", want: 8e9},
		"plain":                 {in: "1048576", want: 1 << 20},
		"exponent":              {in: "1e9", want: 1e9},
		"fraction":              {in: "1.5KiB", want: 1536},
		"decimal fraction":      {in: "1.1KB", want: 1100},
		"lower case":            {in: "1gib", want: 1 << 30},
		"bytes unit":            {in: "64 B", want: 64},
		"largest":               {in: "9223372036854775807", want: 1<<63 - 1},
		"unknown unit":          {in: "4GiBs", wantErr: "not a size"},
		"negative":              {in: "-1MiB", wantErr: "not a size"},
		"empty":                 {in: "", wantErr: "not a size"},
		"only the unit":         {in: "GiB", wantErr: "not a size"},
		"one above the largest": {in: "9223372036854775808", wantErr: "larger than the largest size, 9223372036854775807 bytes"},
		"too large":             {in: "1e30", wantErr: "larger than the largest size"},
		"too large with a unit": {in: "9e9 GiB", wantErr: "larger than the largest size"},
		"beyond float64":        {in: "1e400", wantErr: "larger than the largest size"},
		"not whole":             {in: "1.5", wantErr: `"1.5" is 1.500 bytes, not a whole number of bytes`},
		"not whole with a unit": {in: "1.0001KB", wantErr: "not a whole number of bytes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseBytes(tc.in)
			if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("ParseBytes(%q) = %d, %v; want %d, error containing %q", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

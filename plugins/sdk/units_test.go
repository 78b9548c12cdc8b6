package sdk

import "testing"

func TestParseBytes(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in      string
		want    int64
		wantErr bool
	}{
		"binary":        {in: "4GiB", want: 4 << 30},
		"spaced":        {in: "512 MiB", want: 512 << 20},
		"decimal":       {in: "8GB", want: 8e9},
		"plain":         {in: "1048576", want: 1 << 20},
		"exponent":      {in: "1e9", want: 1e9},
		"fraction":      {in: "1.5KiB", want: 1536},
		"lower case":    {in: "1gib", want: 1 << 30},
		"bytes unit":    {in: "64 B", want: 64},
		"unknown unit":  {in: "4GiBs", wantErr: true},
		"negative":      {in: "-1MiB", wantErr: true},
		"empty":         {in: "", wantErr: true},
		"only the unit": {in: "GiB", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseBytes(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ParseBytes(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

package gpubench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseBytes reads a size such as "4GiB", "512 MiB", "1e9" or "8GB"
// (binary units are powers of 1024, decimal ones of 1000).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != 'e' && r != 'E' && r != '+' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	}
	v, err := strconv.ParseFloat(num, 64)
	scale, ok := byteUnits[unit]
	if err != nil || !ok || v < 0 || math.IsInf(v*scale, 0) {
		return 0, fmt.Errorf("%q is not a size; write a number of bytes or one with a unit such as \"4GiB\" or \"500MB\"", s)
	}
	return int64(v * scale), nil
}

// FormatBytes writes n in the largest binary unit that keeps it whole, or
// with two decimals (human output only; JSON keeps bytes).
func FormatBytes(n int64) string {
	units := []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	for _, u := range units {
		if n >= u.size {
			if n%u.size == 0 {
				return fmt.Sprintf("%d %s", n/u.size, u.name)
			}
			return fmt.Sprintf("%.2f %s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

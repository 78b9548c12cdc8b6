package sdk

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
)

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseBytes reads a size such as "4GiB", "512 MiB", "1e9" or "8GB"
// (binary units are powers of 1024, decimal ones of 1000). The size must
// come to a whole number of bytes that an int64 holds.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != 'e' && r != 'E' && r != '+' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	}
	v, err := strconv.ParseFloat(num, 64)
	scale, ok := byteUnits[unit]
	if (err != nil && !errors.Is(err, strconv.ErrRange)) || !ok || v < 0 {
		return 0, fmt.Errorf("%q is not a size; write a number of bytes or one with a unit such as \"4GiB\" or \"500MB\"", s)
	}
	tooLarge := fmt.Errorf("%q is larger than the largest size, %d bytes", s, int64(math.MaxInt64))
	if v*scale > math.MaxInt64 {
		return 0, tooLarge
	}
	// Exact arithmetic: "1.1KB" is 1100 bytes, which float64 misses.
	size, _ := new(big.Rat).SetString(num)
	size.Mul(size, new(big.Rat).SetFloat64(scale))
	if !size.IsInt() {
		return 0, fmt.Errorf("%q is %s bytes, not a whole number of bytes", s, size.FloatString(3))
	}
	if !size.Num().IsInt64() {
		return 0, tooLarge
	}
	return size.Num().Int64(), nil
}

// decodeBytes reads a size written as a whole number of bytes or as a
// string with a unit.
func decodeBytes(v cty.Value, name string) (int64, error) {
	switch v.Type() {
	case cty.Number:
		f := v.AsBigFloat()
		n, acc := f.Int64()
		if f.Sign() < 0 || acc != big.Exact {
			return 0, &ValueError{"Invalid size", fmt.Sprintf("%s must be a whole number of bytes, not %s.", name, f.Text('g', -1))}
		}
		return n, nil
	case cty.String:
		n, err := ParseBytes(v.AsString())
		if err != nil {
			return 0, &ValueError{"Invalid size", fmt.Sprintf("%s: %v.", name, err)}
		}
		return n, nil
	}
	return 0, &ValueError{"Invalid size", fmt.Sprintf("%s must be a number of bytes or a string such as \"4GiB\", not %s.", name, v.Type().FriendlyName())}
}

// decodeDuration reads a positive duration written as a number of seconds
// or as a string ("90s", "2m").
func decodeDuration(v cty.Value, name string) (time.Duration, error) {
	switch v.Type() {
	case cty.Number:
		if f, _ := v.AsBigFloat().Float64(); f > 0 {
			return time.Duration(f * float64(time.Second)), nil
		}
	case cty.String:
		if d, err := time.ParseDuration(v.AsString()); err == nil && d > 0 {
			return d, nil
		}
	}
	return 0, &ValueError{"Invalid duration", fmt.Sprintf("%s must be a positive number of seconds or a duration such as \"90s\" or \"2m\".", name)}
}

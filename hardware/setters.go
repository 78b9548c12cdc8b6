package hardware

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/zclconf/go-cty/cty"
)

// A setter checks one converted, known, non-null value and stores it in p.
// It returns what is wrong with the value as the rest of a message that
// starts with the argument's name ("must be ...; got ..."), or "" when the
// value is fine.
type setter func(p *Profile, v cty.Value) (problem string)

func text(dst func(*Profile) *string) setter {
	return func(p *Profile, v cty.Value) string {
		*dst(p) = v.AsString()
		return ""
	}
}

func boolean(dst func(*Profile) *bool) setter {
	return func(p *Profile, v cty.Value) string {
		*dst(p) = v.True()
		return ""
	}
}

// negated stores the opposite of a bool, for an argument whose default is
// true: the field's zero value is then the default.
func negated(dst func(*Profile) *bool) setter {
	return func(p *Profile, v cty.Value) string {
		*dst(p) = v.False()
		return ""
	}
}

// count accepts whole numbers from min to maxCount.
func count(min int, dst func(*Profile) *int) setter {
	return func(p *Profile, v cty.Value) string {
		f := v.AsBigFloat()
		n, acc := f.Int64()
		if !f.IsInt() || acc != big.Exact || n < int64(min) || n > maxCount {
			return mustBe(v, fmt.Sprintf("a whole number from %d to %d", min, maxCount))
		}
		*dst(p) = int(n)
		return ""
	}
}

// bound is the lower limit a quantity must respect.
type bound int

const (
	atLeastZero bound = iota
	aboveZero
)

// quantity accepts a finite number within its bound and stores it times
// 10^exp10, which turns the schema's unit (TB/s, µs) into SI.
func quantity(b bound, exp10 int, dst func(*Profile) *float64) setter {
	return func(p *Profile, v cty.Value) string {
		f, ok := finite(v, exp10)
		switch {
		case !ok:
			return mustBe(v, "a finite number")
		case b == aboveZero && f <= 0:
			return mustBe(v, "greater than 0")
		case f < 0:
			return mustBe(v, "0 or more")
		}
		*dst(p) = f
		return ""
	}
}

// finite returns v times 10^exp10 as the float64 nearest the exact product,
// so that 5 µs becomes exactly the literal 5e-6; ok is false past float64.
func finite(v cty.Value, exp10 int) (f float64, ok bool) {
	x := new(big.Float).SetPrec(256).Set(v.AsBigFloat())
	power := new(big.Float).SetPrec(256).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp10))), nil))
	if exp10 >= 0 {
		x.Mul(x, power)
	} else {
		x.Quo(x, power)
	}
	f, _ = x.Float64()
	return f, !math.IsInf(f, 0)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// maxGiB keeps memory sizes far from overflowing int64 bytes.
const maxGiB = 1 << 20

func gibibytes(dst func(*Profile) *int64) setter {
	return func(p *Profile, v cty.Value) string {
		f, ok := finite(v, 0)
		if !ok || f <= 0 || f > maxGiB {
			return mustBe(v, fmt.Sprintf("greater than 0 and at most %d", maxGiB))
		}
		*dst(p) = int64(math.Round(f * (1 << 30)))
		return ""
	}
}

// rating stores a dense TFLOP/s figure; 0 removes the precision, which is
// how an override says a GPU lacks it.
func rating(precision string) setter {
	return func(p *Profile, v cty.Value) string {
		f, ok := finite(v, 0)
		switch {
		case !ok:
			return mustBe(v, "a finite number")
		case f < 0:
			return mustBe(v, "0 or more")
		}
		if p.GPU.TFLOPS == nil {
			p.GPU.TFLOPS = map[string]float64{}
		}
		if f == 0 {
			delete(p.GPU.TFLOPS, precision)
			return ""
		}
		p.GPU.TFLOPS[precision] = f
		return ""
	}
}

var capabilityPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

func computeCapability(dst func(*Profile) *string) setter {
	return func(p *Profile, v cty.Value) string {
		if !capabilityPattern.MatchString(v.AsString()) {
			return mustBe(v, `a major and minor version such as "9.0"`)
		}
		*dst(p) = v.AsString()
		return ""
	}
}

func oneOf(allowed []string, dst func(*Profile) *string) setter {
	return func(p *Profile, v cty.Value) string {
		got := v.AsString()
		for _, k := range allowed {
			if got == k {
				*dst(p) = got
				return ""
			}
		}
		return mustBe(v, "one of "+quoteAll(allowed)) + didYouMean(got, allowed)
	}
}

// didYouMean suggests the closest of candidates to got, or returns "" when
// none is close enough to be a likely typo.
func didYouMean(got string, candidates []string) string {
	best, bestDist := "", 4
	for _, c := range candidates {
		if d := levenshtein.Distance(got, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

func quoteAll(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(quoted, ", ")
}

func mustBe(v cty.Value, what string) string {
	return fmt.Sprintf("must be %s; got %s.", what, display(v))
}

// display renders a value for a message: strings quoted, numbers plain.
func display(v cty.Value) string {
	switch v.Type() {
	case cty.String:
		return fmt.Sprintf("%q", v.AsString())
	case cty.Number:
		return v.AsBigFloat().Text('g', 10)
	}
	return fmt.Sprintf("%#v", v)
}

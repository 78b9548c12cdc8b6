package gpubench

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// body reads attributes of one object value, recording problems as
// diagnostics at their path. A null or unset attribute takes the default;
// an unknown one (at plan time) takes it too and marks the decode unknown.
type body struct {
	v       cty.Value
	path    cty.Path
	diags   *api.Diagnostics
	unknown *bool
}

func (b body) at(name string) cty.Path {
	return append(slices.Clip(b.path), cty.GetAttrStep{Name: name})
}

// raw returns the attribute, or a null value when it is absent or null;
// an unknown attribute is null too, and marks the decode unknown.
func (b body) raw(name string) cty.Value {
	if b.v.IsNull() || !b.v.IsKnown() || !b.v.Type().IsObjectType() || !b.v.Type().HasAttribute(name) {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	v := b.v.GetAttr(name)
	if !v.IsKnown() {
		*b.unknown = true
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return v
}

// get is raw for a leaf value: one not wholly known counts as unset.
func (b body) get(name string) cty.Value {
	v := b.raw(name)
	if !v.IsWhollyKnown() {
		*b.unknown = true
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return v
}

func (b body) errorf(name, summary, format string, args ...any) {
	*b.diags = append(*b.diags, api.Diagnostic{
		Severity: api.Error, Summary: summary, Detail: fmt.Sprintf(format, args...), Path: b.at(name),
	})
}

// block returns the nested block and whether it is present.
func (b body) block(name string) (body, bool) {
	v := b.raw(name)
	return body{v: v, path: b.at(name), diags: b.diags, unknown: b.unknown}, !v.IsNull()
}

func (b body) number(name string) (*big.Float, bool) {
	v := b.get(name)
	if v.IsNull() {
		return nil, false
	}
	if v.Type() != cty.Number {
		b.errorf(name, "Not a number", "%s must be a number, not %s.", name, v.Type().FriendlyName())
		return nil, false
	}
	return v.AsBigFloat(), true
}

// float returns the attribute or def; set reports whether it was given.
func (b body) float(name string, def float64) (val float64, set bool) {
	f, ok := b.number(name)
	if !ok {
		return def, false
	}
	v, _ := f.Float64()
	return v, true
}

// count returns a whole number of at least min.
func (b body) count(name string, def, min int) int {
	f, ok := b.number(name)
	if !ok {
		return def
	}
	if !f.IsInt() {
		b.errorf(name, "Not a whole number", "%s must be a whole number, not %s.", name, f.Text('g', -1))
		return def
	}
	v, _ := f.Int64()
	if v < int64(min) {
		b.errorf(name, "Value too small", "%s must be at least %d, not %d.", name, min, v)
		return def
	}
	return int(v)
}

func (b body) str(name, def string) string {
	v := b.get(name)
	if v.IsNull() {
		return def
	}
	if v.Type() != cty.String {
		b.errorf(name, "Not a string", "%s must be a string, not %s.", name, v.Type().FriendlyName())
		return def
	}
	return v.AsString()
}

func (b body) boolean(name string, def bool) bool {
	v := b.get(name)
	if v.IsNull() {
		return def
	}
	if v.Type() != cty.Bool {
		b.errorf(name, "Not a bool", "%s must be true or false, not %s.", name, v.Type().FriendlyName())
		return def
	}
	return v.True()
}

// strings returns a list of strings, each one of allowed when allowed is
// not empty.
func (b body) strings(name string, def, allowed []string) []string {
	v := b.get(name)
	if v.IsNull() {
		return def
	}
	if !v.CanIterateElements() {
		b.errorf(name, "Not a list", "%s must be a list of strings.", name)
		return def
	}
	var out []string
	before := len(*b.diags)
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || e.Type() != cty.String {
			b.errorf(name, "Not a list of strings", "%s must hold only strings.", name)
			return def
		}
		s := e.AsString()
		if len(allowed) > 0 && !slices.Contains(allowed, s) {
			b.errorf(name, "Unsupported value", "%s holds %q; the supported values are %s.", name, s, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		if len(*b.diags) == before {
			b.errorf(name, "Empty list", "%s must name at least one of %s.", name, strings.Join(allowed, ", "))
		}
		return def
	}
	return out
}

// sizes returns a list of positive whole numbers.
func (b body) sizes(name string, def []int) []int {
	v := b.get(name)
	if v.IsNull() {
		return def
	}
	if !v.CanIterateElements() || v.LengthInt() == 0 {
		b.errorf(name, "Not a list", "%s must be a non-empty list of whole numbers.", name)
		return def
	}
	var out []int
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || e.Type() != cty.Number || !e.AsBigFloat().IsInt() || e.AsBigFloat().Sign() <= 0 {
			b.errorf(name, "Not a whole number", "%s must hold positive whole numbers.", name)
			return def
		}
		n, _ := e.AsBigFloat().Int64()
		out = append(out, int(n))
	}
	return out
}

// bytes returns a size given as a number of bytes or a string with a unit.
func (b body) bytes(name string, def int64) (val int64, set bool) {
	v := b.get(name)
	if v.IsNull() {
		return def, false
	}
	switch v.Type() {
	case cty.Number:
		f := v.AsBigFloat()
		if f.Sign() < 0 || !f.IsInt() {
			b.errorf(name, "Invalid size", "%s must be a whole number of bytes, not %s.", name, f.Text('g', -1))
			return def, false
		}
		n, _ := f.Int64()
		return n, true
	case cty.String:
		n, err := ParseBytes(v.AsString())
		if err != nil {
			b.errorf(name, "Invalid size", "%s: %v.", name, err)
			return def, false
		}
		return n, true
	}
	b.errorf(name, "Invalid size", "%s must be a number of bytes or a string such as \"4GiB\", not %s.", name, v.Type().FriendlyName())
	return def, false
}

// duration returns a duration given as seconds or a string ("90s", "2m").
func (b body) duration(name string, def time.Duration) time.Duration {
	v := b.get(name)
	if v.IsNull() {
		return def
	}
	switch v.Type() {
	case cty.Number:
		f, _ := v.AsBigFloat().Float64()
		if f > 0 {
			return time.Duration(f * float64(time.Second))
		}
	case cty.String:
		if d, err := time.ParseDuration(v.AsString()); err == nil && d > 0 {
			return d
		}
	}
	b.errorf(name, "Invalid duration", "%s must be a positive number of seconds or a duration such as \"90s\" or \"2m\".", name)
	return def
}

// perKey reads a threshold given as one number for every key or as a map
// or object by key; keys must be among allowed, and null entries are
// skipped.
func (b body) perKey(name string, allowed []string) map[string]float64 {
	v := b.get(name)
	if v.IsNull() {
		return nil
	}
	out := map[string]float64{}
	if v.Type() == cty.Number {
		f, _ := v.AsBigFloat().Float64()
		for _, k := range allowed {
			out[k] = f
		}
		return out
	}
	if !v.Type().IsMapType() && !v.Type().IsObjectType() {
		b.errorf(name, "Invalid threshold", "%s must be a number or a map by %s.", name, strings.Join(allowed, ", "))
		return nil
	}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		key := k.AsString()
		if len(allowed) > 0 && !slices.Contains(allowed, key) {
			b.errorf(name, "Unsupported key", "%s has a key %q; the keys are %s.", name, key, strings.Join(allowed, ", "))
			continue
		}
		if e.IsNull() {
			continue
		}
		if e.Type() != cty.Number {
			b.errorf(name, "Not a number", "%s.%s must be a number.", name, key)
			continue
		}
		out[key], _ = e.AsBigFloat().Float64()
	}
	return out
}

// seconds returns a number of seconds, 0 or more.
func (b body) seconds(name string, def float64) float64 {
	v, set := b.float(name, def)
	if set && v < 0 {
		b.errorf(name, "Value too small", "%s must be 0 or more seconds, not %g.", name, v)
		return def
	}
	return v
}

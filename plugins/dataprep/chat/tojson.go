package chat

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// jsonStyle is json.dumps' layout: separators, indent and key sorting.
type jsonStyle struct {
	item, key string
	indent    string
	indented  bool
	sortKeys  bool
}

// pyJSON writes v as Python's json.dumps(v, ensure_ascii=False) does,
// which is what transformers' tojson filter calls.
type pyJSON struct {
	style jsonStyle
	b     strings.Builder
}

func (p *pyJSON) value(v any, depth int) error {
	switch t := v.(type) {
	case *exec.Value:
		if t == nil || !t.Val.IsValid() {
			p.b.WriteString("null")
			return nil
		}
		return p.value(t.Interface(), depth)
	case *exec.Dict:
		keys := make([]string, len(t.Pairs))
		vals := make(map[string]any, len(t.Pairs))
		for i, pair := range t.Pairs {
			keys[i] = pair.Key.String()
			vals[keys[i]] = pair.Value
		}
		return p.object(keys, func(k string) any { return vals[k] }, depth)
	case nil:
		p.b.WriteString("null")
		return nil
	case bool:
		p.b.WriteString(strconv.FormatBool(t))
		return nil
	case string:
		p.str(t)
		return nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.b.WriteString(strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.b.WriteString(strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		p.b.WriteString(pyFloat(rv.Float()))
	case reflect.Slice, reflect.Array:
		return p.list(rv, depth)
	case reflect.Map:
		return p.object(keysOf(rv), func(k string) any {
			return rv.MapIndex(reflect.ValueOf(k)).Interface()
		}, depth)
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			p.b.WriteString("null")
			return nil
		}
		return p.value(rv.Elem().Interface(), depth)
	default:
		return fmt.Errorf("tojson cannot write a %T", v)
	}
	return nil
}

func (p *pyJSON) newline(depth int) {
	if p.style.indented {
		p.b.WriteByte('\n')
		p.b.WriteString(strings.Repeat(p.style.indent, depth))
	}
}

func (p *pyJSON) list(rv reflect.Value, depth int) error {
	if rv.Len() == 0 {
		p.b.WriteString("[]")
		return nil
	}
	p.b.WriteByte('[')
	for i := range rv.Len() {
		if i > 0 {
			p.b.WriteString(p.style.item)
		}
		p.newline(depth + 1)
		if err := p.value(rv.Index(i).Interface(), depth+1); err != nil {
			return err
		}
	}
	p.newline(depth)
	p.b.WriteByte(']')
	return nil
}

func (p *pyJSON) object(keys []string, get func(string) any, depth int) error {
	if len(keys) == 0 {
		p.b.WriteString("{}")
		return nil
	}
	if p.style.sortKeys {
		keys = slices.Sorted(slices.Values(keys))
	}
	p.b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			p.b.WriteString(p.style.item)
		}
		p.newline(depth + 1)
		p.str(k)
		p.b.WriteString(p.style.key)
		if err := p.value(get(k), depth+1); err != nil {
			return err
		}
	}
	p.newline(depth)
	p.b.WriteByte('}')
	return nil
}

// str quotes s as json.dumps does with ensure_ascii=False: only the quote,
// the backslash and control characters are escaped.
func (p *pyJSON) str(s string) {
	p.b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			p.b.WriteString(`\"`)
		case '\\':
			p.b.WriteString(`\\`)
		case '\n':
			p.b.WriteString(`\n`)
		case '\r':
			p.b.WriteString(`\r`)
		case '\t':
			p.b.WriteString(`\t`)
		case '\b':
			p.b.WriteString(`\b`)
		case '\f':
			p.b.WriteString(`\f`)
		case utf8.RuneError:
			p.b.WriteString(`\ufffd`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&p.b, `\u%04x`, r)
			} else {
				p.b.WriteRune(r)
			}
		}
	}
	p.b.WriteByte('"')
}

// pyFloat writes f as Python's float repr: the shortest digits that read
// back, an exponent below 1e-4 and from 1e16, and ".0" on whole numbers.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// toJSONFilter is transformers' tojson: json.dumps(x, ensure_ascii=False,
// indent=indent, separators=separators, sort_keys=sort_keys).
func toJSONFilter(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	style := jsonStyle{item: ", ", key: ": "}
	if v, ok := params.KwArgs["indent"]; ok && !v.IsNil() {
		style.indented = true
		style.item = ","
		if v.IsString() {
			style.indent = v.String()
		} else {
			style.indent = strings.Repeat(" ", v.Integer())
		}
	}
	if v, ok := params.KwArgs["separators"]; ok && !v.IsNil() {
		if !v.IsList() || v.Len() != 2 {
			return exec.AsValue(exec.ErrInvalidCall(fmt.Errorf("tojson separators must be a pair of strings")))
		}
		style.item, style.key = v.Index(0).String(), v.Index(1).String()
	}
	if v, ok := params.KwArgs["sort_keys"]; ok {
		style.sortKeys = v.IsTrue()
	}
	p := &pyJSON{style: style}
	if err := p.value(in.Interface(), 0); err != nil {
		return exec.AsValue(exec.ErrInvalidCall(err))
	}
	return exec.AsSafeValue(p.b.String())
}

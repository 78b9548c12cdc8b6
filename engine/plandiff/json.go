package plandiff

import (
	"bytes"
	"encoding/json"
	"strings"
)

// jsonChanges lists the leaves that differ between two JSON documents, by
// dotted path, in the new document's key order (then keys only the old
// one has). Objects are walked key by key; arrays and scalars compare
// whole, because a list (inputs, dtypes) reads best old against new. A
// nil, empty or null document counts as an empty object when the other is
// an object, so a section that appears lists its fields.
func jsonChanges(old, new json.RawMessage) []Change {
	a, b := decode(old), decode(new)
	_, aObj := a.(*object)
	_, bObj := b.(*object)
	if a == nil && bObj {
		a = &object{}
	}
	if b == nil && aObj {
		b = &object{}
	}
	var out []Change
	walk("", a, b, &out)
	return out
}

func walk(path string, a, b any, out *[]Change) {
	ao, aObj := a.(*object)
	bo, bObj := b.(*object)
	if !aObj || !bObj {
		if !equal(a, b) {
			*out = append(*out, Change{Path: path, Old: mustJSON(a), New: mustJSON(b)})
		}
		return
	}
	for _, k := range unionKeys(bo, ao) {
		av, inA := ao.get(k)
		bv, inB := bo.get(k)
		switch {
		case !inA:
			*out = append(*out, Change{Path: join(path, k), New: mustJSON(bv)})
		case !inB:
			*out = append(*out, Change{Path: join(path, k), Old: mustJSON(av)})
		default:
			walk(join(path, k), av, bv, out)
		}
	}
}

// object is a JSON object that remembers its key order, so changes are
// listed as the document lists its fields (tp before dp).
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// MarshalJSON writes the object back in its key order.
func (o *object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(mustJSON(k))
		buf.WriteByte(':')
		buf.Write(mustJSON(o.vals[k]))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// unionKeys lists first's keys, then second's keys first lacks.
func unionKeys(first, second *object) []string {
	out := append([]string(nil), first.keys...)
	for _, k := range second.keys {
		if _, ok := first.vals[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// equal compares decoded values; objects compare regardless of key order.
func equal(a, b any) bool {
	ao, aObj := a.(*object)
	bo, bObj := b.(*object)
	if aObj != bObj {
		return false
	}
	if !aObj {
		al, aList := a.([]any)
		bl, bList := b.([]any)
		if aList && bList {
			return len(al) == len(bl) && all(len(al), func(i int) bool { return equal(al[i], bl[i]) })
		}
		return !aList && !bList && a == b
	}
	return len(ao.keys) == len(bo.keys) && all(len(ao.keys), func(i int) bool {
		bv, ok := bo.get(ao.keys[i])
		return ok && equal(ao.vals[ao.keys[i]], bv)
	})
}

func all(n int, f func(int) bool) bool {
	for i := range n {
		if !f(i) {
			return false
		}
	}
	return true
}

// decode reads a document keeping key order and numbers as written, so
// large integers stay exact. A document that is not JSON compares as its
// text.
func decode(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return string(raw)
	}
	return v
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			key, _ := k.(string)
			o.keys = append(o.keys, key)
			o.vals[key] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	}
	return tok, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// topLevelKey is the first element of a dotted path.
func topLevelKey(path string) string {
	k, _, _ := strings.Cut(path, ".")
	return k
}

// topLevelKeys lists the distinct first path elements of changes, in order.
func topLevelKeys(cs []Change) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		if k := topLevelKey(c.Path); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// mustJSON encodes values the diff built itself, which always encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonString(err.Error())
	}
	return b
}

func jsonString(s string) json.RawMessage { return mustJSON(s) }

// compact strips the indentation a saved plan's values carry.
func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// rawText shows a JSON string without quotes and anything else as JSON.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

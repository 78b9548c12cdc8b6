package sdk

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/gocty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Decode reads a decoded stage body (or any object value) into target, a
// pointer to a struct whose fields name their attributes with a tag,
// `cty:"name"`. A nested object decodes into a struct or a pointer to one,
// a list, set or tuple into a slice, a map or object into a map with string
// keys, a string, number or bool into a field of that kind or a pointer to
// one (nil where the body leaves it out), a number into a big.Float
// exactly, a value of any shape into a field of type cty.Value, as it is,
// and any value into a field whose pointer is a ValueDecoder, by its
// method; untagged fields are left alone. A tag may name a unit after a
// comma: `cty:"max_bytes,bytes"` reads an int64 size written as a whole
// number of bytes or as a string with a unit ("4GiB", "500MB"), and
// `cty:"timeout,duration"` a time.Duration written as a number of seconds
// or as a string ("90s", "2m").
//
// What the body leaves out or sets to null leaves its field as it was, so
// set defaults in target before decoding. A pointer to a struct set
// before decoding holds the defaults of an optional block: where the body
// has the block, it decodes over a copy of them; where it leaves the block
// out, the pointer becomes nil. So does a value the body does
// not know yet (one that depends on another stage, at plan time), down to
// a list or map with one unknown element; a struct field of type Unknowns
// lists the paths of those values below its struct, so that a check can
// tell "not set" from "not known yet". A value that does not fit its field
// is an error diagnostic whose Path is the attribute's, down to the
// element, so the host reports it at its file:line:col.
func Decode(v cty.Value, target any) api.Diagnostics {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return api.Diagnostics{{Severity: api.Error, Summary: "Cannot decode the stage body",
			Detail: fmt.Sprintf("The plugin decodes into %T, not a pointer to a struct; this is a bug in the plugin.", target)}}
	}
	d := &decoder{}
	switch {
	case !v.IsKnown():
		setUnknowns(rv.Elem(), Unknowns{cty.Path{}})
	case !v.IsNull():
		d.structure(v, rv.Elem(), nil)
	}
	return d.diags
}

// ValueDecoder is a field type that reads its own value, such as a size
// written as a number of bytes or as "4GiB". DecodeCty gets the value
// known, wholly, and not null; an error it returns is reported at the
// field's path, with the summary and detail of a *ValueError, or as an
// invalid value.
type ValueDecoder interface {
	DecodeCty(v cty.Value) error
}

// ValueError is an error a ValueDecoder returns to name its problem.
type ValueError struct {
	Summary, Detail string
}

func (e *ValueError) Error() string { return e.Detail }

// Unknowns lists the values Decode found not known yet, as paths from the
// struct that holds the Unknowns field: an attribute, or an element of
// one (lora.rank, command[0]).
type Unknowns []cty.Path

// Has says whether the value at path is not wholly known: it is unknown,
// or holds an unknown value, or lies in one.
func (u Unknowns) Has(path cty.Path) bool {
	for _, p := range u {
		if hasPrefix(p, path) || hasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Attr is Has for the attribute name.
func (u Unknowns) Attr(name string) bool { return u.Has(cty.GetAttrPath(name)) }

func hasPrefix(p, prefix cty.Path) bool {
	return len(p) >= len(prefix) && p[:len(prefix)].Equals(prefix)
}

// decoder collects the diagnostics and the unknown paths of one Decode.
type decoder struct {
	diags    api.Diagnostics
	unknowns []cty.Path
}

func (d *decoder) structure(v cty.Value, dst reflect.Value, path cty.Path) {
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		d.invalid(path, fmt.Sprintf("%s must be an object, not %s.", pathText(path, "the body"), v.Type().FriendlyName()))
		return
	}
	first := len(d.unknowns)
	t := dst.Type()
	for i := range t.NumField() {
		tag, ok := t.Field(i).Tag.Lookup("cty")
		if !ok || !t.Field(i).IsExported() {
			continue
		}
		name, unit, _ := strings.Cut(tag, ",")
		at := appendPath(path, cty.GetAttrStep{Name: name})
		if unit != "" {
			d.unit(member(v, name), dst.Field(i), at, unit)
			continue
		}
		d.value(member(v, name), dst.Field(i), at)
	}
	setUnknowns(dst, relative(d.unknowns[first:], len(path)))
}

// setUnknowns sets the struct's Unknowns fields.
func setUnknowns(dst reflect.Value, u Unknowns) {
	t := dst.Type()
	for i := range t.NumField() {
		if t.Field(i).Type == unknownsType && t.Field(i).IsExported() {
			dst.Field(i).Set(reflect.ValueOf(u))
		}
	}
}

// relative cuts the first n steps off each path.
func relative(paths []cty.Path, n int) Unknowns {
	var out Unknowns
	for _, p := range paths {
		out = append(out, p[n:])
	}
	return out
}

// member reads name from an object or map value, null where it is absent.
func member(v cty.Value, name string) cty.Value {
	switch {
	case v.Type().IsObjectType() && v.Type().HasAttribute(name):
		return v.GetAttr(name)
	case v.Type().IsMapType() && v.IsKnown() && !v.IsNull() && v.HasIndex(cty.StringVal(name)).True():
		return v.Index(cty.StringVal(name))
	}
	return cty.NullVal(cty.DynamicPseudoType)
}

// unit decodes a field tagged with a unit: ",bytes" for an int64 size,
// ",duration" for a time.Duration.
func (d *decoder) unit(v cty.Value, dst reflect.Value, path cty.Path, unit string) {
	if !v.IsKnown() {
		d.unknowns = append(d.unknowns, path)
		return
	}
	if v.IsNull() {
		return
	}
	var (
		n   int64
		err error
	)
	switch {
	case unit == "bytes" && dst.Kind() == reflect.Int64:
		n, err = decodeBytes(v, pathText(path, "the value"))
	case unit == "duration" && dst.Type() == durationType:
		var t time.Duration
		t, err = decodeDuration(v, pathText(path, "the value"))
		n = int64(t)
	default:
		d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: "Cannot decode the stage body", Path: path,
			Detail: fmt.Sprintf("The plugin tags a field of type %s with the unit %q; this is a bug in the plugin.", dst.Type(), unit)})
		return
	}
	if err != nil {
		d.custom(v, errorDecoder{err}, path)
		return
	}
	dst.SetInt(n)
}

// errorDecoder reports err as a ValueDecoder would.
type errorDecoder struct{ err error }

func (e errorDecoder) DecodeCty(cty.Value) error { return e.err }

// value leaves dst alone for a null value, and for one not known yet,
// which it records; an object decodes member by member, so that what is
// known of it is read.
func (d *decoder) value(v cty.Value, dst reflect.Value, path cty.Path) {
	if !v.IsKnown() || v.IsNull() {
		if !v.IsKnown() {
			d.unknowns = append(d.unknowns, path)
		}
		if dst.Kind() == reflect.Pointer && !dst.IsNil() && decodesMembers(dst.Elem()) {
			dst.SetZero() // a template of a block the body leaves out
		}
		return
	}
	if dst.Type() == ctyValueType {
		dst.Set(reflect.ValueOf(v))
		return
	}
	if dec, ok := dst.Addr().Interface().(ValueDecoder); ok {
		d.custom(v, dec, path)
		return
	}
	switch {
	case decodesMembers(dst):
		d.structure(v, dst, path)
		return
	case dst.Kind() == reflect.Pointer && !dst.IsNil() && decodesMembers(dst.Elem()):
		d.template(v, dst, path)
		return
	case dst.Kind() == reflect.Pointer:
		d.pointer(v, dst, path)
		return
	}
	if !v.IsWhollyKnown() {
		d.unknowns = append(d.unknowns, unknownPaths(v, path)...)
		return
	}
	switch dst.Kind() {
	case reflect.Slice:
		d.slice(v, dst, path)
	case reflect.Map:
		d.mapping(v, dst, path)
	default:
		if err := gocty.FromCtyValue(v, dst.Addr().Interface()); err != nil {
			d.mismatch(v, dst, path, err)
		}
	}
}

// unknownPaths lists the unknown values inside v, a value at path.
func unknownPaths(v cty.Value, path cty.Path) []cty.Path {
	var out []cty.Path
	_ = cty.Walk(v, func(p cty.Path, e cty.Value) (bool, error) {
		if !e.IsKnown() {
			out = append(out, append(path.Copy(), p...))
			return false, nil
		}
		return true, nil
	})
	return out
}

func (d *decoder) custom(v cty.Value, dec ValueDecoder, path cty.Path) {
	if !v.IsWhollyKnown() {
		d.unknowns = append(d.unknowns, unknownPaths(v, path)...)
		return
	}
	err := dec.DecodeCty(v)
	if err == nil {
		return
	}
	var ve *ValueError
	if errors.As(err, &ve) {
		d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: ve.Summary, Detail: ve.Detail, Path: path})
		return
	}
	d.invalid(path, fmt.Sprintf("%s: %s.", pathText(path, "the value"), err))
}

// mismatch reports a value gocty could not store, with a message of its
// own for the commonest case, a fraction where a count goes.
func (d *decoder) mismatch(v cty.Value, dst reflect.Value, path cty.Path, err error) {
	if isInt(dst.Kind()) && v.Type() == cty.Number && !v.AsBigFloat().IsInt() {
		d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: "Not a whole number", Path: path,
			Detail: fmt.Sprintf("%s must be a whole number, not %s.", pathText(path, "the value"), v.AsBigFloat().Text('g', -1))})
		return
	}
	d.invalid(path, fmt.Sprintf("%s: %s.", pathText(path, "the value"), err))
}

func isInt(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// pointer sets dst to a new value decoded from v, and leaves it nil where
// v itself does not fit or is not known; a struct with a member at fault,
// or one not known, is still set.
func (d *decoder) pointer(v cty.Value, dst reflect.Value, path cty.Path) {
	elem := reflect.New(dst.Type().Elem())
	diags, unknowns := len(d.diags), len(d.unknowns)
	d.value(v, elem.Elem(), path)
	for _, x := range d.diags[diags:] {
		if x.Path.Equals(path) {
			return
		}
	}
	for _, p := range d.unknowns[unknowns:] {
		if hasPrefix(path, p) || !decodesMembers(elem.Elem()) && hasPrefix(p, path) {
			return
		}
	}
	dst.Set(elem)
}

// decodesMembers says whether value decodes dst member by member.
func decodesMembers(dst reflect.Value) bool {
	if dst.Kind() != reflect.Struct || dst.Type() == bigFloatType || dst.Type() == ctyValueType {
		return false
	}
	_, custom := dst.Addr().Interface().(ValueDecoder)
	return !custom
}

// template decodes a block over a copy of the struct dst points to, which
// holds the block's defaults.
func (d *decoder) template(v cty.Value, dst reflect.Value, path cty.Path) {
	elem := reflect.New(dst.Type().Elem())
	elem.Elem().Set(dst.Elem())
	d.structure(v, elem.Elem(), path)
	dst.Set(elem)
}

func (d *decoder) slice(v cty.Value, dst reflect.Value, path cty.Path) {
	if !v.CanIterateElements() || v.Type().IsMapType() || v.Type().IsObjectType() {
		d.invalid(path, fmt.Sprintf("%s must be a list, not %s.", pathText(path, "the value"), v.Type().FriendlyName()))
		return
	}
	out := reflect.MakeSlice(dst.Type(), 0, v.LengthInt())
	for i, e := range v.AsValueSlice() {
		elem := reflect.New(dst.Type().Elem()).Elem()
		d.element(e, elem, appendPath(path, cty.IndexStep{Key: cty.NumberIntVal(int64(i))}))
		out = reflect.Append(out, elem)
	}
	dst.Set(out)
}

func (d *decoder) mapping(v cty.Value, dst reflect.Value, path cty.Path) {
	if dst.Type().Key().Kind() != reflect.String || !(v.Type().IsMapType() || v.Type().IsObjectType()) {
		d.invalid(path, fmt.Sprintf("%s must be a map, not %s.", pathText(path, "the value"), v.Type().FriendlyName()))
		return
	}
	out := reflect.MakeMap(dst.Type())
	for key, e := range v.AsValueMap() {
		elem := reflect.New(dst.Type().Elem()).Elem()
		d.element(e, elem, appendPath(path, cty.IndexStep{Key: cty.StringVal(key)}))
		out.SetMapIndex(reflect.ValueOf(key).Convert(dst.Type().Key()), elem)
	}
	dst.Set(out)
}

// element decodes one element of a collection, where null is an error
// rather than "left out": a list or map holds what is written in it.
func (d *decoder) element(e cty.Value, dst reflect.Value, path cty.Path) {
	if e.IsNull() {
		d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: "Null element",
			Detail: fmt.Sprintf("%s is null; give it a value, or leave the element out.", pathText(path, "the element")), Path: path})
		return
	}
	d.value(e, dst, path)
}

var (
	ctyValueType = reflect.TypeFor[cty.Value]()
	bigFloatType = reflect.TypeFor[big.Float]()
	unknownsType = reflect.TypeFor[Unknowns]()
	durationType = reflect.TypeFor[time.Duration]()
)

func (d *decoder) invalid(path cty.Path, detail string) {
	d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid value", Detail: detail, Path: path})
}

// appendPath copies, so that sibling paths never share a backing array.
func appendPath(path cty.Path, step cty.PathStep) cty.Path {
	out := make(cty.Path, len(path), len(path)+1)
	copy(out, path)
	return append(out, step)
}

// pathText renders a path as HCL writes it, or whole for the empty path.
func pathText(path cty.Path, whole string) string {
	if s := api.PathString(path); s != "" {
		return s
	}
	return whole
}

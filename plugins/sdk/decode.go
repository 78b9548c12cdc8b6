package sdk

import (
	"fmt"
	"math/big"
	"reflect"

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
// exactly, and a value of any shape into a field of type cty.Value, as it
// is; untagged fields are left alone.
//
// What the body leaves out, sets to null or does not know yet (a value
// that depends on another stage, at plan time) leaves its field as it
// was, so set defaults in target before decoding; unknown elements of a
// list or map decode as their zero value. A value that does not fit its
// field is an error diagnostic whose Path is the attribute's, down to the
// element, so the host reports it at its file:line:col.
func Decode(v cty.Value, target any) api.Diagnostics {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return api.Diagnostics{{Severity: api.Error, Summary: "Cannot decode the stage body",
			Detail: fmt.Sprintf("The plugin decodes into %T, not a pointer to a struct; this is a bug in the plugin.", target)}}
	}
	return decodeStruct(v, rv.Elem(), nil)
}

func decodeStruct(v cty.Value, dst reflect.Value, path cty.Path) api.Diagnostics {
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return api.Diagnostics{invalid(path, fmt.Sprintf("%s must be an object, not %s.", pathText(path, "the body"), v.Type().FriendlyName()))}
	}
	var diags api.Diagnostics
	t := dst.Type()
	for i := range t.NumField() {
		name, ok := t.Field(i).Tag.Lookup("cty")
		if !ok || !t.Field(i).IsExported() {
			continue
		}
		diags = append(diags, decodeValue(member(v, name), dst.Field(i), appendPath(path, cty.GetAttrStep{Name: name}))...)
	}
	return diags
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

// decodeValue leaves dst alone for a null or unknown value.
func decodeValue(v cty.Value, dst reflect.Value, path cty.Path) api.Diagnostics {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	if dst.Type() == ctyValueType {
		dst.Set(reflect.ValueOf(v))
		return nil
	}
	switch dst.Kind() {
	case reflect.Struct:
		if dst.Type() != bigFloatType {
			return decodeStruct(v, dst, path)
		}
	case reflect.Pointer:
		return decodePointer(v, dst, path)
	case reflect.Slice:
		return decodeSlice(v, dst, path)
	case reflect.Map:
		return decodeMap(v, dst, path)
	}
	if err := gocty.FromCtyValue(v, dst.Addr().Interface()); err != nil {
		return api.Diagnostics{invalid(path, fmt.Sprintf("%s: %s.", pathText(path, "the value"), err))}
	}
	return nil
}

// decodePointer sets dst to a new value decoded from v, and leaves it nil
// where v itself does not fit; a struct with a member at fault is still set.
func decodePointer(v cty.Value, dst reflect.Value, path cty.Path) api.Diagnostics {
	elem := reflect.New(dst.Type().Elem())
	diags := decodeValue(v, elem.Elem(), path)
	for _, d := range diags {
		if d.Path.Equals(path) {
			return diags
		}
	}
	dst.Set(elem)
	return diags
}

func decodeSlice(v cty.Value, dst reflect.Value, path cty.Path) api.Diagnostics {
	if !v.CanIterateElements() || v.Type().IsMapType() || v.Type().IsObjectType() {
		return api.Diagnostics{invalid(path, fmt.Sprintf("%s must be a list, not %s.", pathText(path, "the value"), v.Type().FriendlyName()))}
	}
	out := reflect.MakeSlice(dst.Type(), 0, v.LengthInt())
	var diags api.Diagnostics
	for i, e := range v.AsValueSlice() {
		elem := reflect.New(dst.Type().Elem()).Elem()
		diags = append(diags, decodeElement(e, elem, appendPath(path, cty.IndexStep{Key: cty.NumberIntVal(int64(i))}))...)
		out = reflect.Append(out, elem)
	}
	dst.Set(out)
	return diags
}

func decodeMap(v cty.Value, dst reflect.Value, path cty.Path) api.Diagnostics {
	if dst.Type().Key().Kind() != reflect.String || !(v.Type().IsMapType() || v.Type().IsObjectType()) {
		return api.Diagnostics{invalid(path, fmt.Sprintf("%s must be a map, not %s.", pathText(path, "the value"), v.Type().FriendlyName()))}
	}
	out := reflect.MakeMap(dst.Type())
	var diags api.Diagnostics
	for key, e := range v.AsValueMap() {
		elem := reflect.New(dst.Type().Elem()).Elem()
		diags = append(diags, decodeElement(e, elem, appendPath(path, cty.IndexStep{Key: cty.StringVal(key)}))...)
		out.SetMapIndex(reflect.ValueOf(key).Convert(dst.Type().Key()), elem)
	}
	dst.Set(out)
	return diags
}

// decodeElement decodes one element of a collection, where null is an
// error rather than "left out": a list or map holds what is written in it.
func decodeElement(e cty.Value, dst reflect.Value, path cty.Path) api.Diagnostics {
	if e.IsKnown() && e.IsNull() {
		return api.Diagnostics{{Severity: api.Error, Summary: "Null element",
			Detail: fmt.Sprintf("%s is null; give it a value, or leave the element out.", pathText(path, "the element")), Path: path}}
	}
	return decodeValue(e, dst, path)
}

var (
	ctyValueType = reflect.TypeFor[cty.Value]()
	bigFloatType = reflect.TypeFor[big.Float]()
)

func invalid(path cty.Path, detail string) api.Diagnostic {
	return api.Diagnostic{Severity: api.Error, Summary: "Invalid value", Detail: detail, Path: path}
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

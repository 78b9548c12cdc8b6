package convert

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"

	pluginv1 "github.com/gpuflow/gpuflow/plugins/proto/v1"
)

// ValueToProto encodes v with its type. Wholly known values travel as cty
// JSON; values with unknowns (plan-time configs) as cty msgpack, which can
// express them. Marks such as sensitivity are dropped: the host knows from
// the schema which attributes are sensitive. cty.NilVal encodes as nil.
func ValueToProto(v cty.Value) (*pluginv1.DynamicValue, error) {
	if v == cty.NilVal {
		return nil, nil
	}
	v, _ = v.UnmarkDeep()
	ty := v.Type()
	typeJSON, err := ctyjson.MarshalType(ty)
	if err != nil {
		return nil, fmt.Errorf("encoding type %s: %w", ty.FriendlyName(), err)
	}
	out := &pluginv1.DynamicValue{Type: typeJSON}
	if v.IsWhollyKnown() {
		out.Json, err = ctyjson.Marshal(v, ty)
	} else {
		out.Msgpack, err = ctymsgpack.Marshal(v, ty)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding %s value: %w", ty.FriendlyName(), err)
	}
	return out, nil
}

// ValueFromProto decodes what ValueToProto encoded; nil decodes as cty.NilVal.
func ValueFromProto(dv *pluginv1.DynamicValue) (cty.Value, error) {
	if dv == nil {
		return cty.NilVal, nil
	}
	ty, err := ctyjson.UnmarshalType(dv.GetType())
	if err != nil {
		return cty.NilVal, fmt.Errorf("decoding value type: %w", err)
	}
	var v cty.Value
	if dv.GetMsgpack() != nil {
		v, err = ctymsgpack.Unmarshal(dv.GetMsgpack(), ty)
	} else {
		v, err = ctyjson.Unmarshal(dv.GetJson(), ty)
	}
	if err != nil {
		return cty.NilVal, fmt.Errorf("decoding %s value: %w", ty.FriendlyName(), err)
	}
	return v, nil
}

// ValuesToProto encodes a map of values, such as a stage's outputs.
func ValuesToProto(values map[string]cty.Value) (map[string]*pluginv1.DynamicValue, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]*pluginv1.DynamicValue, len(values))
	for name, v := range values {
		dv, err := ValueToProto(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = dv
	}
	return out, nil
}

// ValuesFromProto decodes what ValuesToProto encoded.
func ValuesFromProto(values map[string]*pluginv1.DynamicValue) (map[string]cty.Value, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]cty.Value, len(values))
	for name, dv := range values {
		v, err := ValueFromProto(dv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

package chat

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// keyOrder maps a decoded object (by its map's identity) to its keys in
// the order the record wrote them.
type keyOrder map[uintptr][]string

func (o keyOrder) set(m map[string]any, keys []string) {
	o[reflect.ValueOf(m).Pointer()] = keys
}

// recordOrders holds the key order of every object of every live
// Conversation. Python keeps a dict's insertion order, so json.dumps,
// items(), keys() and values() follow the record; gonja's dict methods
// run without the render's context, so they find the order here, by the
// map's identity, which no other live map shares.
var recordOrders sync.Map

// remember registers c's objects until c is garbage.
func remember(c *Conversation, order keyOrder) {
	for p, keys := range order {
		recordOrders.Store(p, keys)
	}
	runtime.AddCleanup(c, func(order keyOrder) {
		for p := range order {
			recordOrders.Delete(p)
		}
	}, order)
}

// recordKeys returns m's keys in record order, or in Go's sorted order for
// maps the record did not hold.
func recordKeys(m reflect.Value) []string {
	if keys, ok := recordOrders.Load(m.Pointer()); ok && len(keys.([]string)) == m.Len() {
		return keys.([]string)
	}
	keys := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		keys = append(keys, fmt.Sprint(k.Interface()))
	}
	slices.Sort(keys)
	return keys
}

type dictMethod = exec.Method[map[string]any]

// dictMethods are gonja's dict methods with items, keys and values in
// record order instead of sorted.
func dictMethods() *exec.MethodSet[map[string]any] {
	set := map[string]dictMethod{}
	for _, name := range []string{"get", "pop", "setdefault", "update", "copy", "clear"} {
		if m, ok := builtins.Methods.Dict.Get(name); ok {
			set[name] = m
		}
	}
	ordered := func(pick func(key string, val any) any) dictMethod {
		return func(self map[string]any, selfValue *exec.Value, args *exec.VarArgs) (any, error) {
			if err := args.Take(); err != nil {
				return nil, exec.ErrInvalidCall(err)
			}
			// gonja hands the method a deep copy; the record's own map
			// (and its own nested maps) carry the order.
			if orig, ok := selfValue.Interface().(map[string]any); ok {
				self = orig
			}
			keys := recordKeys(reflect.ValueOf(self))
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = pick(k, self[k])
			}
			return out, nil
		}
	}
	set["items"] = ordered(func(k string, v any) any { return []any{k, v} })
	set["keys"] = ordered(func(k string, _ any) any { return k })
	set["values"] = ordered(func(_ string, v any) any { return v })
	return exec.NewMethodSet(set)
}

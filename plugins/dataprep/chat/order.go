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

// recordKeys is one object's key order; recordOrders holds pointers to
// them, so that a cleanup deletes only its own entry, never that of a
// newer map at the same address.
type recordKeys []string

// remember registers c's objects until c is garbage.
func remember(c *Conversation, order keyOrder) {
	entries := make(map[uintptr]*recordKeys, len(order))
	for p, keys := range order {
		entry := recordKeys(keys)
		entries[p] = &entry
		recordOrders.Store(p, &entry)
	}
	runtime.AddCleanup(c, func(entries map[uintptr]*recordKeys) {
		for p, entry := range entries {
			recordOrders.CompareAndDelete(p, entry)
		}
	}, entries)
}

// keysOf returns m's keys in record order, or in Go's sorted order for
// maps the record did not hold.
func keysOf(m reflect.Value) []string {
	if entry, ok := recordOrders.Load(m.Pointer()); ok && holds(m, *entry.(*recordKeys)) {
		return *entry.(*recordKeys)
	}
	keys := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		keys = append(keys, fmt.Sprint(k.Interface()))
	}
	slices.Sort(keys)
	return keys
}

// holds says whether keys are exactly m's keys: a map that took a freed
// record map's address before its entry was dropped has others.
func holds(m reflect.Value, keys []string) bool {
	if len(keys) != m.Len() || m.Type().Key().Kind() != reflect.String {
		return false
	}
	for _, k := range keys {
		if !m.MapIndex(reflect.ValueOf(k).Convert(m.Type().Key())).IsValid() {
			return false
		}
	}
	return true
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
			keys := keysOf(reflect.ValueOf(self))
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

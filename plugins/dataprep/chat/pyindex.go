package chat

import (
	"reflect"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
)

// fromEndFilter names the filter that turns x[-k] into x's own index; no
// template can name it.
const fromEndFilter = "\x00from_end"

// countFromEnd rewrites every x[-k] of a parsed template into
// x[x | from_end(k)]. gonja reads x[-k] only when x is longer than k, so
// the last item of a one-item list (messages[-1] of a single message) is
// undefined there, where Python, and so transformers, counts from the end.
func countFromEnd(root *nodes.Template) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			// Control structures keep their expressions in unexported
			// fields, which reflect reads but will not hand out; the
			// node's own address gives a pointer that can be changed.
			v = reflect.NewAt(v.Type().Elem(), v.UnsafePointer())
			if item, ok := v.Interface().(*nodes.GetItem); ok {
				fromEnd(item)
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(root))
}

func fromEnd(item *nodes.GetItem) {
	minus, ok := item.Arg.(*nodes.UnaryExpression)
	if !ok || !minus.Negative {
		return
	}
	k, ok := minus.Term.(*nodes.Integer)
	seq, isExpr := item.Node.(nodes.Expression)
	if !ok || !isExpr {
		return
	}
	item.Arg = &nodes.FilteredExpression{
		Expression: seq,
		Filters: []*nodes.FilterCall{{
			Token: minus.Operator, Name: fromEndFilter,
			Args: []nodes.Expression{k}, Kwargs: map[string]nodes.Expression{},
		}},
	}
}

// fromEndIndex gives the index of the k-th item from the end of a sequence, or
// its length (no item) where it is shorter than k, as Python's x[-k]
// finds nothing there.
func fromEndIndex(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	n := in.Len()
	k := params.Args[0].Integer()
	if k > n {
		return exec.AsValue(n)
	}
	return exec.AsValue(n - k)
}

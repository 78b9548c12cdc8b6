package input

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// listElement returns the element field of the LIST group list, by the
// Parquet format's rules for lists, its backward-compatibility rules
// included: the repeated field is itself the element when it is a
// primitive, a group of several fields, or a one-field group named "array"
// or the list's name with "_tuple" appended (the two-level layouts older
// writers made); otherwise it is the standard three-level wrapper of one
// element field.
func listElement(list parquet.Field) (elem parquet.Field, twoLevel bool, err error) {
	fields := list.Fields()
	if len(fields) != 1 || !fields[0].Repeated() {
		return nil, false, errors.New("a LIST group holds exactly one repeated field by the Parquet format; this one does not")
	}
	rep := fields[0]
	if rep.Leaf() || len(rep.Fields()) != 1 || rep.Name() == "array" || rep.Name() == list.Name()+"_tuple" {
		return rep, true, nil
	}
	return rep.Fields()[0], false, nil
}

// threeLevel returns f with every two-level list in it rewritten to the
// standard three-level layout. Both layouts have the same columns and
// levels, so a row of the file reconstructs through the rewritten schema,
// while the Parquet library rebuilds only the standard one. A malformed
// list, or a two-level one inside a MAP, is an error naming its column.
func threeLevel(path string, f parquet.Field) (parquet.Field, error) {
	switch {
	case f.Leaf():
		return f, nil
	case logicalIs[*format.ListType](f):
		return standardList(path, f)
	}
	fields := f.Fields()
	var changed []parquet.Field
	for i, field := range fields {
		rewritten, err := threeLevel(columnPath(path, field.Name()), field)
		if err != nil {
			return nil, err
		}
		if rewritten != field && changed == nil {
			changed = make([]parquet.Field, i, len(fields))
			copy(changed, fields)
		}
		if changed != nil {
			changed = append(changed, rewritten)
		}
	}
	if changed == nil {
		return f, nil
	}
	if logicalIs[*format.MapType](f) {
		return nil, fmt.Errorf("column %q: a map holding a two-level list cannot be read; write its lists in the standard three-level layout", path)
	}
	return &regrouped{Field: f, fields: changed}, nil
}

// standardList rewrites the LIST group list, at path, as a three-level one
// where it or its element needs it.
func standardList(path string, list parquet.Field) (parquet.Field, error) {
	elem, twoLevel, err := listElement(list)
	if err != nil {
		return nil, fmt.Errorf("column %q: %v", path, err)
	}
	elemPath := columnPath(path, list.Fields()[0].Name())
	if !twoLevel {
		elemPath = columnPath(elemPath, elem.Name())
	}
	rewritten, err := threeLevel(elemPath, elem)
	if err != nil {
		return nil, err
	}
	if !twoLevel && rewritten == elem {
		return list, nil
	}
	var of parquet.Node = rewritten
	if twoLevel {
		// The repeated field is the element, each one present.
		of = parquet.Required(rewritten)
	}
	node := parquet.List(of)
	if list.Optional() {
		node = parquet.Optional(node)
	}
	return &standIn{Node: node, field: list}, nil
}

func columnPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// regrouped is a group of the file's schema with some of its fields
// rewritten, in the file's order.
type regrouped struct {
	parquet.Field
	fields []parquet.Field
}

func (g *regrouped) Fields() []parquet.Field { return g.fields }

// standIn is a rewritten node in place of a field of the file's schema.
type standIn struct {
	parquet.Node
	field parquet.Field
}

func (s *standIn) Name() string { return s.field.Name() }

func (s *standIn) Value(base reflect.Value) reflect.Value { return s.field.Value(base) }

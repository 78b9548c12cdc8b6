package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// conversationColumns are the top-level columns that hold a conversation,
// as chat datasets name them: OpenAI-style messages or ShareGPT turns.
var conversationColumns = []string{"messages", "conversations"}

// toolsColumn is the optional column of the tools a conversation offers:
// a list of objects, or their JSON text.
const toolsColumn = "tools"

// parquetChats streams the conversations of a Parquet file, one row at a
// time, each as the JSON record a JSONL line would hold:
// {"messages": [...], "tools": [...]}. Fields keep the schema's order, as
// a JSONL record keeps its writer's, and null fields are left out.
type parquetChats struct {
	name   string
	f      *os.File
	file   *parquet.File
	schema *parquet.Schema
	fields []parquet.Field
	group  int
	row    int64
	rows   parquet.Rows
	buf    []parquet.Row
	k, n   int
	// broken is a row group's read error held back until the rows read
	// before it are passed on.
	broken error
	value  map[string]any
	out    bytes.Buffer
}

// openParquetChats opens name and finds its conversation column. A file
// that is not Parquet or has no such column is a *RecordError at the file.
func openParquetChats(name string) (*parquetChats, error) {
	f, file, err := openParquetFile(name)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) (*parquetChats, error) {
		f.Close()
		return nil, fileError(name, format, args...)
	}
	root, err := threeLevel("", file.Root())
	if err != nil {
		return fail("%v", err)
	}
	schema := parquet.NewSchema(file.Schema().Name(), root)
	var conv, tools parquet.Field
	for _, field := range schema.Fields() {
		switch {
		case conv == nil && slices.Contains(conversationColumns, field.Name()):
			conv = field
		case field.Name() == toolsColumn:
			tools = field
		}
	}
	if conv == nil {
		return fail(`no "messages" or "conversations" column; the columns are %s`, columnList(file.Schema()))
	}
	if !isList(conv) {
		return fail("column %q is not a list; want a list of messages (role and content, or from and value)", conv.Name())
	}
	fields := []parquet.Field{conv}
	if tools != nil {
		fields = append(fields, tools)
	}
	return &parquetChats{name: name, f: f, file: file, schema: schema, fields: fields,
		buf: make([]parquet.Row, 64), value: map[string]any{}}, nil
}

func isList(n parquet.Node) bool {
	return logicalIs[*format.ListType](n) || n.Repeated()
}

// logicalIs says whether n's logical type is a T.
func logicalIs[T any](n parquet.Node) bool {
	lt := n.Type().LogicalType()
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(T)
	return ok
}

func (p *parquetChats) pos() Position {
	return Position{File: p.name, RowGroup: p.group, Row: p.row, InRows: true}
}

// next returns the next row's conversation, io.EOF after the last row, or
// a *RecordError for a row that cannot be written as one or a row group
// that cannot be read (whose remaining rows are then passed over).
func (p *parquetChats) next() (Record, error) {
	for p.k == p.n {
		if err := p.fill(); err != nil {
			return Record{}, err
		}
	}
	row := p.buf[p.k]
	p.k++
	pos := p.pos()
	p.row++
	clear(p.value)
	if err := p.schema.Reconstruct(&p.value, row); err != nil {
		return Record{Pos: pos}, &RecordError{Pos: pos, Reason: fmt.Sprintf("row cannot be read: %v", err)}
	}
	if err := p.record(); err != nil {
		return Record{Pos: pos}, &RecordError{Pos: pos, Reason: err.Error()}
	}
	return Record{Pos: pos, Data: p.out.Bytes()}, nil
}

// record writes the row's conversation and tools as a JSON object.
func (p *parquetChats) record() error {
	p.out.Reset()
	p.out.WriteByte('{')
	for i, field := range p.fields {
		v := p.value[field.Name()]
		if v == nil {
			if i == 0 {
				return fmt.Errorf("column %q is null", field.Name())
			}
			continue
		}
		if i > 0 {
			p.out.WriteByte(',')
		}
		writeString(&p.out, field.Name())
		p.out.WriteByte(':')
		if s, ok := v.(string); ok && field.Name() == toolsColumn {
			// Tools stored as their JSON text, as many datasets do.
			if !json.Valid([]byte(s)) {
				return fmt.Errorf("column %q is a string but not JSON", toolsColumn)
			}
			p.out.WriteString(s)
			continue
		}
		if err := writeValue(&p.out, field, v); err != nil {
			return fmt.Errorf("column %q: %w", field.Name(), err)
		}
	}
	p.out.WriteByte('}')
	return nil
}

// writeValue writes v, read from the column node n, as JSON.
func writeValue(b *bytes.Buffer, n parquet.Field, v any) error {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
		return nil
	case []any:
		elem := n
		if logicalIs[*format.ListType](n) {
			var err error
			if elem, _, err = listElement(n); err != nil {
				return err
			}
		}
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, elem, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case map[string]any:
		return writeObject(b, n, t)
	case string:
		writeString(b, t)
		return nil
	case []byte:
		writeString(b, string(t))
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("a %T value cannot be written as JSON", v)
	}
	b.Write(data)
	return nil
}

// writeObject writes a struct in its schema's field order, leaving out
// null fields, or a Parquet MAP with its keys sorted.
func writeObject(b *bytes.Buffer, n parquet.Field, m map[string]any) error {
	var keys []string
	fields := map[string]parquet.Field{}
	if n.Leaf() || logicalIs[*format.MapType](n) {
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
	} else {
		for _, f := range n.Fields() {
			keys = append(keys, f.Name())
			fields[f.Name()] = f
		}
	}
	b.WriteByte('{')
	first := true
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeString(b, k)
		b.WriteByte(':')
		node := fields[k]
		if node == nil {
			node = n
		}
		if err := writeValue(b, node, v); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode ends the value with a newline
}

// fill reads the next rows, moving to the next row group as each runs out.
func (p *parquetChats) fill() error {
	p.k, p.n = 0, 0
	if err := p.broken; err != nil {
		p.broken = nil
		pos := p.pos()
		p.nextGroup()
		return &RecordError{Pos: pos, Reason: fmt.Sprintf("row group cannot be read from this row on (%v); its remaining rows are passed over", err)}
	}
	groups := p.file.RowGroups()
	if p.rows == nil {
		if p.group >= len(groups) {
			return io.EOF
		}
		p.rows = groups[p.group].Rows()
	}
	n, err := p.rows.ReadRows(p.buf)
	p.n = n
	switch {
	case errors.Is(err, io.EOF):
		if n == 0 {
			p.nextGroup()
		}
		return nil
	case err != nil:
		p.broken = err
	}
	return nil
}

func (p *parquetChats) nextGroup() {
	if p.rows != nil {
		p.rows.Close()
	}
	p.rows = nil
	p.group++
	p.row = 0
}

func (p *parquetChats) close() {
	if p.rows != nil {
		p.rows.Close()
	}
	p.f.Close()
}

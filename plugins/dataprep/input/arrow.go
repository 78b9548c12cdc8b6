package input

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// arrowRows streams the values of one string column of an Arrow IPC stream
// file, as Hugging Face datasets' save_to_disk writes them: one record
// batch (about a thousand rows there) in memory at a time. Batches are
// reported as row groups.
type arrowRows struct {
	name  string
	f     *os.File
	rd    *ipc.Reader
	path  []string
	batch int
	row   int64
	col   *stringColumn
}

// stringColumn is a column of strings, of either Arrow string type.
type stringColumn struct {
	arrow.Array
	value func(int) string
}

// openArrow opens name as an Arrow IPC stream. A file that is not one is a
// *RecordError at the file, as a Parquet file would be.
func openArrow(name string, path []string) (*arrowRows, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	rd, err := ipc.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		f.Close()
		return nil, &RecordError{Pos: Position{File: name}, Reason: fmt.Sprintf("not a readable Arrow IPC stream: %v", err)}
	}
	return &arrowRows{name: name, f: f, rd: rd, path: path, batch: -1}, nil
}

func (a *arrowRows) pos() Position {
	return Position{File: a.name, RowGroup: a.batch, Row: a.row, InRows: true}
}

// next returns the next row's value, io.EOF after the last, or a
// *RecordError for a null, a column missing or not of strings (reported at
// the batch and skipping it), or a batch that cannot be read (ending the
// file).
func (a *arrowRows) next() (Record, error) {
	for a.col == nil || a.row >= int64(a.col.Len()) {
		if !a.rd.Next() {
			if err := a.rd.Err(); err != nil && !errors.Is(err, io.EOF) {
				pos := Position{File: a.name, RowGroup: a.batch + 1, InRows: true}
				return Record{Pos: pos}, &RecordError{Pos: pos, Reason: fmt.Sprintf("record batch cannot be read (%v); the rest of the file is passed over", err)}
			}
			return Record{}, io.EOF
		}
		a.batch++
		a.row = 0
		col, err := column(a.rd.RecordBatch(), a.path)
		if err != nil {
			a.col = nil
			pos := a.pos()
			return Record{Pos: pos}, &RecordError{Pos: pos, Reason: err.Error()}
		}
		a.col = col
	}
	pos := a.pos()
	k := int(a.row)
	a.row++
	if a.col.IsNull(k) {
		return Record{Pos: pos}, &RecordError{Pos: pos, Reason: fmt.Sprintf("column %q is null", strings.Join(a.path, "."))}
	}
	return Record{Pos: pos, Data: []byte(a.col.value(k))}, nil
}

// column finds the string column at path in a record batch, through struct
// fields for a nested path.
func column(rec arrow.RecordBatch, path []string) (*stringColumn, error) {
	dotted := strings.Join(path, ".")
	idx := rec.Schema().FieldIndices(path[0])
	if len(idx) == 0 {
		var names []string
		for _, f := range rec.Schema().Fields() {
			names = append(names, fmt.Sprintf("%q", f.Name))
		}
		return nil, fmt.Errorf("no column %q; the columns are %s", dotted, strings.Join(names, ", "))
	}
	col := rec.Column(idx[0])
	for _, name := range path[1:] {
		st, ok := col.(*array.Struct)
		if !ok {
			return nil, fmt.Errorf("no column %q: %s is not a struct", dotted, col.DataType())
		}
		k, ok := st.DataType().(*arrow.StructType).FieldIdx(name)
		if !ok {
			return nil, fmt.Errorf("no column %q", dotted)
		}
		col = st.Field(k)
	}
	switch c := col.(type) {
	case *array.String:
		return &stringColumn{c, c.Value}, nil
	case *array.LargeString:
		return &stringColumn{c, c.Value}, nil
	}
	return nil, fmt.Errorf("column %q holds %s, want strings", dotted, col.DataType())
}

func (a *arrowRows) close() {
	a.rd.Release()
	a.f.Close()
}

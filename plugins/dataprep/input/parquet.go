package input

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// parquetBatch is how many values are read from a page at a time; a page
// (about 1 MiB as writers make them) bounds the memory one file takes.
const parquetBatch = 256

// parquetRows streams the values of one string column of a Parquet file,
// row group by row group and page by page, never a whole column chunk.
type parquetRows struct {
	name   string
	f      *os.File
	file   *parquet.File
	column int
	path   string
	// group is the row group being read, row the next row within it.
	group  int
	row    int64
	pages  parquet.Pages
	values parquet.ValueReader
	buf    []parquet.Value
	k, n   int
}

// openParquet opens name and finds the column path names. A file that is
// not Parquet, or lacks the column, or holds no strings in it, is a
// *RecordError at the file, which a caller may skip like a bad record.
func openParquet(name string, path []string) (*parquetRows, error) {
	f, file, err := openParquetFile(name)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) (*parquetRows, error) {
		f.Close()
		return nil, fileError(name, format, args...)
	}
	dotted := strings.Join(path, ".")
	leaf, ok := file.Schema().Lookup(path...)
	if !ok {
		return fail("no column %q; the columns are %s", dotted, columnList(file.Schema()))
	}
	if leaf.MaxRepetitionLevel > 0 {
		return fail("column %q is a list (repeated); name a column holding one string per row", dotted)
	}
	if kind := leaf.Node.Type().Kind(); kind != parquet.ByteArray {
		return fail("column %q holds %v, want strings (BYTE_ARRAY)", dotted, kind)
	}
	return &parquetRows{name: name, f: f, file: file, column: leaf.ColumnIndex, path: dotted,
		buf: make([]parquet.Value, parquetBatch)}, nil
}

// openParquetFile opens name and reads its Parquet footer; the caller
// closes the returned file. A file that is not Parquet is a *RecordError
// at the file. Page indexes and bloom filters are not read: rows are
// streamed in order, never looked up.
func openParquetFile(name string) (*os.File, *parquet.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	file, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, nil, fileError(name, "not a readable Parquet file: %v", err)
	}
	return f, file, nil
}

// fileError is a *RecordError at the file name as a whole.
func fileError(name, format string, args ...any) error {
	return &RecordError{Pos: Position{File: name}, Reason: fmt.Sprintf(format, args...)}
}

func columnList(s *parquet.Schema) string {
	var names []string
	for _, c := range s.Columns() {
		names = append(names, fmt.Sprintf("%q", strings.Join(c, ".")))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// next returns the next row's value, io.EOF after the last row, or a
// *RecordError for a null value or a row group that cannot be read (whose
// remaining rows are then passed over).
func (p *parquetRows) next() (Record, error) {
	for p.k == p.n {
		if err := p.fill(); err != nil {
			return Record{}, err
		}
	}
	v := p.buf[p.k]
	p.k++
	pos := p.pos()
	p.row++
	if v.IsNull() {
		return Record{Pos: pos}, &RecordError{Pos: pos, Reason: fmt.Sprintf("column %q is null", p.path)}
	}
	return Record{Pos: pos, Data: v.ByteArray()}, nil
}

func (p *parquetRows) pos() Position {
	return Position{File: p.name, RowGroup: p.group, Row: p.row, InRows: true}
}

// fill reads the next values, moving to the next page and row group as
// each runs out.
func (p *parquetRows) fill() error {
	p.k, p.n = 0, 0
	if p.values != nil {
		n, err := p.values.ReadValues(p.buf)
		p.n = n
		if errors.Is(err, io.EOF) {
			p.values = nil
			return nil
		}
		if err != nil {
			return p.corrupt(err)
		}
		return nil
	}
	groups := p.file.RowGroups()
	if p.pages == nil {
		if p.group >= len(groups) {
			return io.EOF
		}
		p.pages = groups[p.group].ColumnChunks()[p.column].Pages()
	}
	page, err := p.pages.ReadPage()
	if errors.Is(err, io.EOF) {
		p.nextGroup()
		return nil
	}
	if err != nil {
		return p.corrupt(err)
	}
	p.values = page.Values()
	return nil
}

// corrupt reports a row group that cannot be read and passes over the rest
// of it.
func (p *parquetRows) corrupt(err error) error {
	pos := p.pos()
	p.nextGroup()
	return &RecordError{Pos: pos, Reason: fmt.Sprintf("row group cannot be read from this row on (%v); its remaining rows are passed over", err)}
}

func (p *parquetRows) nextGroup() {
	if p.pages != nil {
		p.pages.Close()
	}
	p.pages, p.values = nil, nil
	p.group++
	p.row = 0
}

func (p *parquetRows) close() {
	if p.pages != nil {
		p.pages.Close()
	}
	p.f.Close()
}

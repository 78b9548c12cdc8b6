package input

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// MaxRecordBytes bounds one record (a JSONL line or a plain-text file), and
// so the memory one record can take.
const MaxRecordBytes = 256 << 20

// Position is where a record starts: a line of a text file, or a row of a
// Parquet file (row group and row within it, both counted from 0).
type Position struct {
	File     string
	Line     int
	RowGroup int
	Row      int64
	InRows   bool
}

func (p Position) String() string {
	switch {
	case p.InRows:
		return fmt.Sprintf("%s: row group %d, row %d", p.File, p.RowGroup, p.Row)
	case p.Line == 0:
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Record is one raw record, not yet decoded.
type Record struct {
	Pos  Position
	Data []byte
}

// RecordError is a record that cannot be turned into text. It is the
// record's fault, not the reader's, so a caller may skip it and go on.
type RecordError struct {
	Pos    Position
	Reason string
}

func (e *RecordError) Error() string { return e.Pos.String() + ": " + e.Reason }

// Unit says what one record is.
type Unit int

// Record units.
const (
	UnitLine Unit = iota + 1 // one record per non-blank line (JSONL)
	UnitFile                 // one record per file (plain text)
	UnitRow                  // one record per row of a Parquet column
	// UnitConversation is one record per JSON line, or per row of a
	// Parquet file (.parquet) as the JSON object a line would hold.
	UnitConversation
)

// Reader streams the records of files in order. Files ending in .gz or .zst
// are decompressed. It holds one record (or one Parquet page) in memory at a
// time.
type Reader struct {
	files []string
	unit  Unit
	// column is the path of the Parquet column read, for UnitRow.
	column []string
	next   int
	f      *os.File
	r      *bufio.Reader
	unzip  io.Closer
	rows   rowSource
	name   string
	line   int
}

// NewReader reads files record by record.
func NewReader(files []string, unit Unit) *Reader {
	return &Reader{files: files, unit: unit}
}

// NewRowReader reads the string column at path (names from the root into
// nested records) of Parquet files, a record per row.
func NewRowReader(files []string, path []string) *Reader {
	return &Reader{files: files, unit: UnitRow, column: path}
}

// Next returns the next record, io.EOF after the last, a *RecordError for
// a record too large to hold, or another error when a file cannot be read.
// The record's Data is valid until the next call.
func (r *Reader) Next() (Record, error) {
	if r.unit == UnitRow {
		return r.nextRow()
	}
	for {
		if r.rows != nil {
			rec, err := r.rows.next()
			if err == io.EOF {
				r.close()
				continue
			}
			return rec, err
		}
		if r.r == nil {
			if r.next == len(r.files) {
				return Record{}, io.EOF
			}
			name := r.files[r.next]
			if r.unit == UnitConversation && strings.HasSuffix(name, ".parquet") {
				r.next++
				rows, err := openParquetChats(name)
				if err != nil {
					return Record{Pos: Position{File: name}}, err
				}
				r.rows = rows
				continue
			}
			if err := r.open(name); err != nil {
				return Record{}, err
			}
			r.next++
		}
		rec, err := r.read()
		if err == io.EOF {
			r.close()
			continue
		}
		return rec, err
	}
}

// rowSource is a file read row by row: Parquet, or an Arrow IPC stream.
type rowSource interface {
	next() (Record, error)
	close()
}

func (r *Reader) nextRow() (Record, error) {
	for {
		if r.rows == nil {
			if r.next == len(r.files) {
				return Record{}, io.EOF
			}
			name := r.files[r.next]
			r.next++
			rows, err := openRows(name, r.column)
			if err != nil {
				return Record{Pos: Position{File: name}}, err
			}
			r.rows = rows
		}
		rec, err := r.rows.next()
		if err == io.EOF {
			r.rows.close()
			r.rows = nil
			continue
		}
		return rec, err
	}
}

// openRows opens an Arrow IPC stream (a name ending in .arrow, as
// save_to_disk writes) or a Parquet file.
func openRows(name string, column []string) (rowSource, error) {
	if strings.HasSuffix(name, ".arrow") {
		return openArrow(name, column)
	}
	return openParquet(name, column)
}

func (r *Reader) open(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	r.f, r.name, r.line = f, name, 0
	r.r = bufio.NewReaderSize(f, 1<<20)
	switch {
	case strings.HasSuffix(name, ".gz"):
		gz, err := gzip.NewReader(r.r)
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		r.unzip, r.r = gz, bufio.NewReaderSize(gz, 1<<20)
	case strings.HasSuffix(name, ".zst"):
		zr, err := zstd.NewReader(r.r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		rc := zr.IOReadCloser()
		r.unzip, r.r = rc, bufio.NewReaderSize(rc, 1<<20)
	}
	return nil
}

// Close releases the file being read.
func (r *Reader) Close() error {
	r.close()
	return nil
}

func (r *Reader) close() {
	if r.unzip != nil {
		r.unzip.Close()
	}
	if r.f != nil {
		r.f.Close()
	}
	if r.rows != nil {
		r.rows.close()
	}
	r.f, r.r, r.unzip, r.rows = nil, nil, nil, nil
}

func (r *Reader) read() (Record, error) {
	if r.unit == UnitFile {
		return r.readFile()
	}
	for {
		data, err := r.readLine()
		if err != nil {
			return Record{}, err
		}
		if len(bytes.TrimSpace(data)) > 0 {
			return Record{Pos: Position{File: r.name, Line: r.line}, Data: data}, nil
		}
	}
}

func (r *Reader) readFile() (Record, error) {
	if r.line > 0 {
		return Record{}, io.EOF
	}
	r.line = 1
	data, err := io.ReadAll(io.LimitReader(r.r, MaxRecordBytes+1))
	if err != nil {
		return Record{}, fmt.Errorf("%s: %w", r.name, err)
	}
	pos := Position{File: r.name, Line: 1}
	if len(data) > MaxRecordBytes {
		return Record{}, &RecordError{Pos: pos, Reason: fmt.Sprintf("file is larger than %d MiB; split it or use JSONL", MaxRecordBytes>>20)}
	}
	return Record{Pos: pos, Data: data}, nil
}

// readLine returns the next line without its line ending, io.EOF at the end.
func (r *Reader) readLine() ([]byte, error) {
	r.line++
	var long []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > MaxRecordBytes {
				return nil, r.skipLongLine()
			}
			long = append(long, chunk...)
			continue
		}
		if err == io.EOF && len(chunk) == 0 && long == nil {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", r.name, r.line, err)
		}
		if long != nil {
			chunk = append(long, chunk...)
		}
		chunk = trimLineEnd(chunk)
		return chunk, nil
	}
}

// skipLongLine discards the rest of an over-long line and reports it.
func (r *Reader) skipLongLine() error {
	pos := Position{File: r.name, Line: r.line}
	for {
		_, err := r.r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	return &RecordError{Pos: pos, Reason: fmt.Sprintf("line is longer than %d MiB", MaxRecordBytes>>20)}
}

func trimLineEnd(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

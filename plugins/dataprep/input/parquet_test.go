package input

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

type flatRow struct {
	ID   int64   `parquet:"id"`
	Text *string `parquet:"text,optional"`
}

type nestedRow struct {
	Meta struct {
		Lang string `parquet:"lang"`
		Body string `parquet:"body"`
	} `parquet:"meta"`
}

// writeParquet writes rows in row groups of perGroup rows.
func writeParquet[T any](t *testing.T, path string, rows []T, perGroup int) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	for k := 0; k < len(rows); k += perGroup {
		if _, err := w.Write(rows[k:min(k+perGroup, len(rows))]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corruptColumnChunk overwrites the bytes of one column chunk of the
// file at path (its dictionary and data pages) with 0xFF, leaving the
// footer readable, as a damaged row group in an otherwise whole file.
func corruptColumnChunk(t *testing.T, path string, rowGroup, column int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	chunk := f.Metadata().RowGroups[rowGroup].Columns[column].MetaData
	start := chunk.DataPageOffset
	if chunk.DictionaryPageOffset > 0 && chunk.DictionaryPageOffset < start {
		start = chunk.DictionaryPageOffset
	}
	for k := start; k < start+chunk.TotalCompressedSize; k++ {
		data[k] = 0xFF
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func flatRows(texts ...string) []flatRow {
	rows := make([]flatRow, len(texts))
	for k := range texts {
		rows[k] = flatRow{ID: int64(k), Text: &texts[k]}
	}
	return rows
}

// readRecords reads every record, keeping errors in place of their records.
func readRecords(t *testing.T, rd *Reader) []string {
	t.Helper()
	defer rd.Close()
	var out []string
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out
		}
		var recErr *RecordError
		switch {
		case errors.As(err, &recErr):
			out = append(out, "error: "+recErr.Error())
		case err != nil:
			t.Fatalf("fatal error: %v", err)
		default:
			out = append(out, fmt.Sprintf("%s: %s", rec.Pos, rec.Data))
		}
	}
}

func TestParquetRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flat := filepath.Join(dir, "flat.parquet")
	writeParquet(t, flat, flatRows("a", "b", "c", "d", "e"), 2)
	nested := filepath.Join(dir, "nested.parquet")
	var nrows []nestedRow
	for _, body := range []string{"x", "y"} {
		var r nestedRow
		r.Meta.Lang, r.Meta.Body = "en", body
		nrows = append(nrows, r)
	}
	writeParquet(t, nested, nrows, 10)
	withNull := filepath.Join(dir, "null.parquet")
	rows := flatRows("a", "b")
	rows[1].Text = nil
	writeParquet(t, withNull, rows, 10)
	notParquet := writeFile(t, dir, "text.parquet", "this is not parquet\n")

	tests := map[string]struct {
		files []string
		field string
		want  []string
	}{
		"row groups in order": {files: []string{flat}, field: "text", want: []string{
			flat + ": row group 0, row 0: a", flat + ": row group 0, row 1: b",
			flat + ": row group 1, row 0: c", flat + ": row group 1, row 1: d",
			flat + ": row group 2, row 0: e",
		}},
		"nested column": {files: []string{nested}, field: "meta.body", want: []string{
			nested + ": row group 0, row 0: x", nested + ": row group 0, row 1: y",
		}},
		"missing column": {files: []string{flat, nested}, field: "body", want: []string{
			"error: " + flat + `: no column "body"; the columns are "id", "text"`,
			"error: " + nested + `: no column "body"; the columns are "meta.lang", "meta.body"`,
		}},
		"wrong type": {files: []string{flat}, field: "id", want: []string{
			"error: " + flat + `: column "id" holds INT64, want strings (BYTE_ARRAY)`,
		}},
		"null": {files: []string{withNull}, field: "text", want: []string{
			withNull + ": row group 0, row 0: a", "error: " + withNull + `: row group 0, row 1: column "text" is null`,
		}},
		"not parquet, then good": {files: []string{notParquet, nested}, field: "meta.lang", want: []string{
			"error: " + notParquet + ": not a readable Parquet file: invalid magic header of parquet file: \"this\"",
			nested + ": row group 0, row 0: en", nested + ": row group 0, row 1: en",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dec, err := NewParquetDecoder(tc.field)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, readRecords(t, dec.NewReader(tc.files))); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParquetCorruptRowGroup damages the data of the middle row group: its
// rows are reported once, named by file, row group and row, and reading
// goes on with the next row group.
func TestParquetCorruptRowGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "corrupt.parquet")
	texts := []string{"first-aaaaaaaaaaaa", "first-bbbbbbbbbbbb", "middle-cccccccccccc", "middle-dddddddddddd", "last-eeeeeeeeeeee"}
	writeParquet(t, path, flatRows(texts...), 2)
	corruptColumnChunk(t, path, 1, 1)
	dec, err := NewParquetDecoder("text")
	if err != nil {
		t.Fatal(err)
	}
	got := readRecords(t, dec.NewReader([]string{path}))
	if len(got) != 4 {
		t.Fatalf("got %d records, want 2 good, 1 error, 1 good: %q", len(got), got)
	}
	wantPrefix := "error: " + path + ": row group 1, row 0: row group cannot be read from this row on"
	if got[2][:min(len(got[2]), len(wantPrefix))] != wantPrefix {
		t.Errorf("record 2 = %q, want it to start %q", got[2], wantPrefix)
	}
	if want := path + ": row group 2, row 0: last-eeeeeeeeeeee"; got[3] != want {
		t.Errorf("record 3 = %q, want %q", got[3], want)
	}
}

func TestCompressedJSONL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := "{\"text\":\"a\"}\n{\"text\":\"b\"}\n"
	var gz, zs bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(content))
	zw.Close()
	enc, err := zstd.NewWriter(&zs)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write([]byte(content))
	enc.Close()
	gzPath := writeFile(t, dir, "a.jsonl.gz", gz.String())
	zsPath := writeFile(t, dir, "b.jsonl.zst", zs.String())
	badPath := writeFile(t, dir, "c.jsonl.zst", "not zstd")
	got := readRecords(t, NewReader([]string{gzPath, zsPath}, UnitLine))
	want := []string{gzPath + `:1: {"text":"a"}`, gzPath + `:2: {"text":"b"}`, zsPath + `:1: {"text":"a"}`, zsPath + `:2: {"text":"b"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	rd := NewReader([]string{badPath}, UnitLine)
	defer rd.Close()
	if _, err := rd.Next(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("c.jsonl.zst")) {
		t.Errorf("corrupt .zst: error %v, want one naming the file", err)
	}
}

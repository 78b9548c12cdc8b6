package input

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"
)

// writeArrowStream writes an Arrow IPC stream as save_to_disk does: a
// string column "text" and a struct column "meta" with a string "body",
// one record batch per slice of texts; "" stands for a null text.
func writeArrowStream(t *testing.T, path string, batches ...[]string) {
	t.Helper()
	meta := arrow.StructOf(arrow.Field{Name: "body", Type: arrow.BinaryTypes.LargeString})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "meta", Type: meta},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := ipc.NewWriter(f, ipc.WithSchema(schema))
	for _, texts := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		tb := b.Field(0).(*array.StringBuilder)
		mb := b.Field(1).(*array.StructBuilder)
		body := mb.FieldBuilder(0).(*array.LargeStringBuilder)
		for _, text := range texts {
			if text == "" {
				tb.AppendNull()
			} else {
				tb.Append(text)
			}
			mb.Append(true)
			body.Append("body of " + text)
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSavedDatasets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A Dataset folder of two Arrow files, and a DatasetDict with a train split.
	ds := filepath.Join(dir, "ds")
	os.MkdirAll(ds, 0o755)
	writeArrowStream(t, filepath.Join(ds, "data-00000-of-00002.arrow"), []string{"a", "b"}, []string{"c"})
	writeArrowStream(t, filepath.Join(ds, "data-00001-of-00002.arrow"), []string{"d", ""})
	writeFile(t, ds, "state.json", `{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}]}`)
	writeFile(t, ds, "dataset_info.json", `{}`)
	dd := filepath.Join(dir, "dd")
	os.MkdirAll(filepath.Join(dd, "train"), 0o755)
	writeFile(t, dd, "dataset_dict.json", `{"splits": ["train"]}`)
	writeArrowStream(t, filepath.Join(dd, "train", "data-00000-of-00001.arrow"), []string{"x"})
	writeFile(t, filepath.Join(dd, "train"), "state.json", `{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`)
	notArrow := writeFile(t, dir, "bad.arrow", "not arrow")
	f0, f1 := filepath.Join(ds, "data-00000-of-00002.arrow"), filepath.Join(ds, "data-00001-of-00002.arrow")

	tests := map[string]struct {
		inputs []string
		split  string
		field  string
		want   []string
	}{
		"dataset": {inputs: []string{"ds"}, field: "text", want: []string{
			f0 + ": row group 0, row 0: a", f0 + ": row group 0, row 1: b", f0 + ": row group 1, row 0: c",
			f1 + ": row group 0, row 0: d", "error: " + f1 + `: row group 0, row 1: column "text" is null`,
		}},
		"nested": {inputs: []string{"dd"}, split: "train", field: "meta.body", want: []string{
			filepath.Join(dd, "train", "data-00000-of-00001.arrow") + ": row group 0, row 0: body of x",
		}},
		"wrong type": {inputs: []string{"dd"}, split: "train", field: "meta", want: []string{
			"error: " + filepath.Join(dd, "train", "data-00000-of-00001.arrow") + `: row group 0, row 0: column "meta" holds struct<body: large_utf8>, want strings`,
		}},
		"not arrow": {inputs: []string{"bad.arrow"}, field: "text", want: []string{
			"error: " + notArrow + ": not a readable Arrow IPC stream: arrow/ipc: could not read message schema: arrow/ipc: could not read message metadata: unexpected EOF",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files, err := Expand(dir, tc.inputs, tc.split)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := NewParquetDecoder(tc.field)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, readRecords(t, dec.NewReader(files))); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Expand(dir, []string{"dd"}, "test"); err == nil {
		t.Errorf("a DatasetDict without the split expanded without error")
	}
}

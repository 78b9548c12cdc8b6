package input

import (
	"compress/gzip"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExpand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"b.jsonl", "a.jsonl", "c.txt"} {
		writeFile(t, dir, name, "{}\n")
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	// Two Hugging Face hub snapshot layouts: split-named files, and a folder
	// per split.
	for _, name := range []string{"hub/data/train-00001-of-00002.parquet", "hub/data/train-00000-of-00002.parquet",
		"hub/data/test-00000-of-00001.parquet", "hub/README.md", "hub2/data/train/0000.parquet", "hub2/data/validation/0000.parquet"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		writeFile(t, dir, name, "")
	}
	tests := map[string]struct {
		patterns []string
		split    string
		want     []string
		wantErr  string
	}{
		"snapshot train":    {patterns: []string{"hub"}, want: []string{"train-00000-of-00002.parquet", "train-00001-of-00002.parquet"}},
		"snapshot test":     {patterns: []string{"hub"}, split: "test", want: []string{"test-00000-of-00001.parquet"}},
		"split folders":     {patterns: []string{"hub2"}, split: "validation", want: []string{"0000.parquet"}},
		"no such split":     {patterns: []string{"hub"}, split: "valid", wantErr: `has no Parquet files of split "valid" under data/; it has test, train`},
		"glob sorted":       {patterns: []string{"*.jsonl"}, want: []string{"a.jsonl", "b.jsonl"}},
		"order kept, dedup": {patterns: []string{"c.txt", "*.jsonl", "a.jsonl"}, want: []string{"c.txt", "a.jsonl", "b.jsonl"}},
		"no match":          {patterns: []string{"*.parquet"}, wantErr: `inputs[0] "*.parquet": matches no file`},
		"missing file":      {patterns: []string{"a.jsonl", "nope.jsonl"}, wantErr: `inputs[1] "nope.jsonl": no such file`},
		"folder":            {patterns: []string{"sub"}, wantErr: "is a folder"},
		"none":              {wantErr: "no inputs given"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			split := tc.split
			if split == "" {
				split = "train"
			}
			got, err := Expand(dir, tc.patterns, split)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k := range got {
				got[k] = filepath.Base(got[k])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

type readRecord struct {
	Line int
	Data string
}

func readAll(t *testing.T, files []string, unit Unit) []readRecord {
	t.Helper()
	r := NewReader(files, unit)
	defer r.Close()
	var out []readRecord
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, readRecord{Line: rec.Pos.Line, Data: string(rec.Data)})
	}
}

func TestReaderLines(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		content string
		want    []readRecord
	}{
		"lines":             {content: "a\nb\n", want: []readRecord{{1, "a"}, {2, "b"}}},
		"blank lines":       {content: "\n a\n  \n\nb", want: []readRecord{{2, " a"}, {5, "b"}}},
		"crlf":              {content: "a\r\nb\r\n", want: []readRecord{{1, "a"}, {2, "b"}}},
		"long line":         {content: strings.Repeat("x", 3<<20) + "\ny\n", want: []readRecord{{1, strings.Repeat("x", 3<<20)}, {2, "y"}}},
		"empty file":        {content: ""},
		"no final newline":  {content: "a", want: []readRecord{{1, "a"}}},
		"only blank":        {content: "\n\n"},
		"carriage return 1": {content: "a\rb\n", want: []readRecord{{1, "a\rb"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), "in.jsonl", tc.content)
			if diff := cmp.Diff(tc.want, readAll(t, []string{path}, UnitLine)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReaderGzipAndFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gzPath := filepath.Join(dir, "b.jsonl.gz")
	f, err := os.Create(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	io.WriteString(gz, "x\ny\n")
	gz.Close()
	f.Close()
	plain := writeFile(t, dir, "a.jsonl", "w\n")
	want := []readRecord{{1, "w"}, {1, "x"}, {2, "y"}}
	if diff := cmp.Diff(want, readAll(t, []string{plain, gzPath}, UnitLine)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	wantFiles := []readRecord{{1, "w\n"}, {1, "x\ny\n"}}
	if diff := cmp.Diff(wantFiles, readAll(t, []string{plain, gzPath}, UnitFile)); diff != "" {
		t.Errorf("file records (-want +got):\n%s", diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	jsonl, _ := NewJSONLDecoder("text")
	tmpl, err := NewTemplateDecoder("{{.prompt}} {{.answer}}")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		dec     *Decoder
		data    string
		want    string
		wantErr string
	}{
		"text field":     {dec: jsonl, data: `{"text": "hi\u00e9", "id": 3}`, want: "hié"},
		"malformed":      {dec: jsonl, data: `{"text": "hi"`, wantErr: "in.jsonl:7: malformed JSON: unexpected end of JSON input"},
		"missing field":  {dec: jsonl, data: `{"txt": "hi", "id": 1}`, wantErr: `in.jsonl:7: no field "text" (the record has "id", "txt")`},
		"not a string":   {dec: jsonl, data: `{"text": 42}`, wantErr: `in.jsonl:7: field "text" is a number, want a string`},
		"not an object":  {dec: jsonl, data: `["text"]`, wantErr: "in.jsonl:7: malformed JSON"},
		"invalid utf8":   {dec: jsonl, data: "{\"text\": \"a\xffb\"}", wantErr: "in.jsonl:7: not valid UTF-8 (byte 0xff)"},
		"template":       {dec: tmpl, data: `{"prompt": "Q", "answer": 1000000}`, want: "Q 1000000"},
		"template field": {dec: tmpl, data: `{"prompt": "Q"}`, wantErr: `in.jsonl:7: template: template:1:14: executing "template" at <.answer>: map has no entry for key "answer"`},
		"template array": {dec: tmpl, data: `[1]`, wantErr: "in.jsonl:7: record is an array, want a JSON object"},
		"two values":     {dec: tmpl, data: `{} {}`, wantErr: "more than one value"},
		"text utf8 line": {dec: NewTextDecoder(), data: "ok\nok\nbad\xc3", wantErr: "in.jsonl:9: not valid UTF-8 (byte 0xc3)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.dec.Decode(Record{Pos: Position{File: "in.jsonl", Line: 7}, Data: []byte(tc.data)})
			if tc.wantErr != "" {
				var re *RecordError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want a RecordError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("text = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestChatTemplate renders chat and function-calling samples through a
// Llama-3-style template and compares with a golden file.
func TestChatTemplate(t *testing.T) {
	t.Parallel()
	tmplText, err := os.ReadFile(filepath.Join("testdata", "chat.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewTemplateDecoder(string(tmplText))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r := NewReader([]string{filepath.Join("testdata", "chat.jsonl")}, UnitLine)
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text, err := dec.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(text + "\n---\n")
	}
	golden := filepath.Join("testdata", "chat.golden")
	if *update {
		os.WriteFile(golden, []byte(out.String()), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("rendered (-golden +got):\n%s", diff)
	}
}

package dataprep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/gpuflow/gpuflow/plugins/api"
)

type parquetDoc struct {
	Text string `parquet:"text"`
	URL  string `parquet:"url"`
}

func writeParquetDocs(t *testing.T, path string, texts ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[parquetDoc](f)
	for _, text := range texts {
		if _, err := w.Write([]parquetDoc{{Text: text, URL: "https://example.org"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestApplyParquet(t *testing.T) {
	t.Parallel()
	tok := fmt.Sprintf(`tokenizer {  type = "tiktoken"  path = %q  }`, vocabPath(t, "r50k_base.tiktoken.gz"))
	tests := map[string]struct {
		extra       string
		wantSummary string
		wantDetail  string
		documents   string
		skipped     string
	}{
		"text column": {documents: "3", skipped: "0"},
		"missing column": {extra: `text_field = "body"`, wantSummary: "Bad input record",
			wantDetail: `a.parquet: no column "body"; the columns are "text", "url". Fix the record, or set on_error = "skip"`},
		"not parquet, skipped": {extra: `inputs = ["*.parquet", "b.txt"]  on_error = "skip"`, documents: "3", skipped: "1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeParquetDocs(t, filepath.Join(dir, "a.parquet"), "one document", "two", "three")
			writeLines(t, filepath.Join(dir, "b.txt"), "not parquet")
			inputs := `inputs = ["a.parquet"]`
			if strings.HasPrefix(tc.extra, "inputs") {
				inputs, tc.extra = tc.extra, ""
			}
			body := strings.Join([]string{inputs, `format = "parquet"`, `output_dir = "out"`, tok, tc.extra}, "  ")
			resp, err := New().ApplyStage(context.Background(), &api.ApplyRequest{
				StageRequest: api.StageRequest{Type: StageType, Name: "x", Config: decodeBody(t, body), WorkDir: dir},
			}, &recorder{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantSummary != "" {
				if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != tc.wantSummary || !strings.Contains(resp.Diagnostics[0].Detail, tc.wantDetail) {
					t.Fatalf("diagnostics %+v, want %q with detail containing %q", resp.Diagnostics, tc.wantSummary, tc.wantDetail)
				}
				return
			}
			if resp.Diagnostics.HasErrors() {
				t.Fatalf("diagnostics: %+v", resp.Diagnostics)
			}
			for key, want := range map[string]string{"documents": tc.documents, "skipped": tc.skipped} {
				if got := resp.Outputs[key].AsBigFloat().String(); got != want {
					t.Errorf("%s = %s, want %s", key, got, want)
				}
			}
		})
	}
}

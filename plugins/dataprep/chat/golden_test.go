package chat

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// templateModels are the tokenizer folders scripts/tokenizer/fetch.sh
// writes under .tokenizers at the repository root; the model licences
// leave the templates out of the repository.
var templateModels = []string{"llama3_1", "qwen2_5", "qwen3"}

// fetchedTemplate loads a fetched model's template, skipping the test when
// it is absent unless GPUFLOW_CHAT_TEMPLATES=require.
func fetchedTemplate(t *testing.T, model string) *Template {
	t.Helper()
	path := filepath.Join("..", "..", "..", ".tokenizers", model, "tokenizer_config.json")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("GPUFLOW_CHAT_TEMPLATES") == "require" {
			t.Fatalf("%s is missing: run scripts/tokenizer/fetch.sh %s .tokenizers/%s", path, model, model)
		}
		t.Skipf("%s is missing: run scripts/tokenizer/fetch.sh %s .tokenizers/%s (GPUFLOW_CHAT_TEMPLATES=require fails instead)", path, model, model)
	}
	tmpl, err := Load(path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// unsplittable names the renders whose assistant spans cannot be found:
// Qwen3's template writes an empty reasoning block only on the assistant
// turns after the last user message, so an earlier turn renders otherwise
// once more turns follow.
var unsplittable = map[string]bool{"qwen3-plain": true, "qwen3-tools": true, "qwen3-tools-nosystem": true}

type namedRecord struct {
	name string
	data []byte
}

func readRecords(t *testing.T) []namedRecord {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []namedRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var head struct{ Name string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatal(err)
		}
		out = append(out, namedRecord{head.Name, append([]byte(nil), sc.Bytes()...)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRealTemplates renders each record with each model's own template,
// whole and as the prompt before its last assistant turn, and compares
// them with golden files, which are checked against transformers'
// rendering (docs/benchmarks.md).
func TestRealTemplates(t *testing.T) {
	records := readRecords(t)
	for _, model := range templateModels {
		t.Run(model, func(t *testing.T) {
			tmpl := fetchedTemplate(t, model)
			for _, rec := range records {
				t.Run(rec.name, func(t *testing.T) {
					c, err := Parse(rec.data)
					if err != nil {
						t.Fatal(err)
					}
					whole, err := tmpl.Render(c, len(c.Messages), false)
					if err != nil {
						t.Fatal(err)
					}
					prompt, err := tmpl.Render(c, len(c.Messages)-1, true)
					if err != nil {
						t.Fatal(err)
					}
					checkGolden(t, filepath.Join("testdata", "golden", model+"-"+rec.name+".txt"), whole)
					checkGolden(t, filepath.Join("testdata", "golden", model+"-"+rec.name+".prompt.txt"), prompt)
					_, err = tmpl.Spans(c, TrainAssistant)
					if unsplittable[model+"-"+rec.name] {
						if err == nil {
							t.Error("spans found, want the error that says the template cannot be split")
						}
					} else if err != nil {
						t.Errorf("spans: %v", err)
					}
				})
			}
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

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

// templateModel is one model's chat template: a tokenizer_config.json or
// chat_template.jinja fetched by scripts/tokenizer (the model licences
// leave those out of the repository) under .tokenizers at the repository
// root, or one committed under testdata/templates. bos and eos are those
// of the model's tokenizer_config.json, for a .jinja file.
type templateModel struct {
	name, path string
	fetch      string
	bos, eos   string
}

var templateModels = []templateModel{
	{name: "llama3_1", path: "tokenizer_config.json", fetch: "scripts/tokenizer/fetch.sh llama3_1 .tokenizers/llama3_1"},
	{name: "llama3_1_tools", path: "chat_template.jinja", fetch: "scripts/tokenizer/fetch_template.sh library/llama3.1:8b .tokenizers/llama3_1_tools",
		bos: "<|begin_of_text|>", eos: "<|eot_id|>"},
	{name: "qwen2", path: "chat_template.jinja", fetch: "scripts/tokenizer/fetch_template.sh library/qwen2:0.5b .tokenizers/qwen2",
		eos: "<|im_end|>"},
	{name: "qwen2_5", path: "tokenizer_config.json", fetch: "scripts/tokenizer/fetch.sh qwen2_5 .tokenizers/qwen2_5"},
	{name: "qwen3", path: "tokenizer_config.json", fetch: "scripts/tokenizer/fetch.sh qwen3 .tokenizers/qwen3"},
	{name: "mistral", path: filepath.Join("testdata", "templates", "mistral.jinja"), bos: "<s>", eos: "</s>"},
}

// load loads the model's template, skipping the test when a fetched one
// is absent unless GPUFLOW_CHAT_TEMPLATES=require.
func (m templateModel) load(t *testing.T) *Template {
	t.Helper()
	path := m.path
	if m.fetch != "" {
		path = filepath.Join("..", "..", "..", ".tokenizers", m.name, m.path)
		if _, err := os.Stat(path); err != nil {
			if os.Getenv("GPUFLOW_CHAT_TEMPLATES") == "require" {
				t.Fatalf("%s is missing: run %s", path, m.fetch)
			}
			t.Skipf("%s is missing: run %s (GPUFLOW_CHAT_TEMPLATES=require fails instead)", path, m.fetch)
		}
	}
	tmpl, err := Load(path, m.bos, m.eos)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// unsplittable names the renders whose assistant spans cannot be found:
// Qwen3's template writes an empty reasoning block only on the assistant
// turns after the last user message, and Mistral's writes the system turn
// into the last user message, so an earlier turn renders otherwise once
// more turns follow.
var unsplittable = map[string]bool{
	"qwen3-plain": true, "qwen3-tools": true, "qwen3-tools-nosystem": true,
	"mistral-system": true, "mistral-tools": true,
}

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
// them with golden files, which scripts/tokenizer/chat_exactness.py
// compares with transformers' rendering (docs/benchmarks.md).
func TestRealTemplates(t *testing.T) {
	records := readRecords(t)
	for _, model := range templateModels {
		t.Run(model.name, func(t *testing.T) {
			tmpl := model.load(t)
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
					checkGolden(t, filepath.Join("testdata", "golden", model.name+"-"+rec.name+".txt"), whole)
					checkGolden(t, filepath.Join("testdata", "golden", model.name+"-"+rec.name+".prompt.txt"), prompt)
					_, err = tmpl.Spans(c, TrainAssistant)
					if unsplittable[model.name+"-"+rec.name] {
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

// TestTemplateRefuses checks that a template's raise_exception reaches the
// user with the template's own words.
func TestTemplateRefuses(t *testing.T) {
	mistral := templateModels[len(templateModels)-1].load(t)
	for _, tc := range []struct{ name, record, want string }{
		{"roles out of turn", `{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`,
			"the chat template refuses the record: After the optional system message, conversation roles must alternate user/assistant/user/assistant/..."},
		{"short tool call id", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"","tool_calls":[{"id":"abc","function":{"name":"f","arguments":{}}}]}]}`,
			"the chat template refuses the record: Tool call IDs should be alphanumeric strings with length 9!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.record))
			if err != nil {
				t.Fatal(err)
			}
			_, err = mistral.Render(c, len(c.Messages), false)
			if err == nil {
				t.Fatal("rendered, want the template's refusal")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

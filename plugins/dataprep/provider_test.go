package dataprep

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/parquet-go/parquet-go"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/dataprep/shard"
)

// vocabPath is a test vocabulary of plugins/dataprep/bpe, absolute.
func vocabPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("bpe", "testdata", "vocab", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// decodeBody decodes a stage body written in HCL with the stage schema, as
// the host does.
func decodeBody(t *testing.T, src string) cty.Value {
	t.Helper()
	if !strings.Contains(src, "\n") {
		src = strings.ReplaceAll(src, "  ", "\n") // two spaces separate arguments in the one-line tables
	}
	f, diags := hclsyntax.ParseConfig([]byte(src), "stage.hcl", hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	v, diags := hcldec.Decode(f.Body, stageSchema.DecoderSpec(), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return v
}

type diagSummary struct {
	Summary string
	Path    string
}

func summarize(diags api.Diagnostics) []diagSummary {
	var out []diagSummary
	for _, d := range diags {
		var parts []string
		for _, step := range d.Path {
			switch s := step.(type) {
			case cty.GetAttrStep:
				parts = append(parts, s.Name)
			case cty.IndexStep:
				parts = append(parts, fmt.Sprintf("[%s]", s.Key.AsBigFloat().String()))
			}
		}
		out = append(out, diagSummary{d.Summary, strings.Join(parts, ".")})
	}
	return out
}

func TestValidate(t *testing.T) {
	t.Parallel()
	const tok = `tokenizer {  type = "tiktoken"  path = "v.tiktoken"  }`
	tests := map[string]struct {
		body string
		want []diagSummary
	}{
		"minimal":        {body: `inputs = ["a.jsonl"]  output_dir = "out"  ` + tok},
		"bad format":     {body: `inputs = ["a"]  output_dir = "o"  format = "csv"  ` + tok, want: []diagSummary{{"Unsupported format", "format"}}},
		"no template":    {body: `inputs = ["a"]  output_dir = "o"  format = "template"  ` + tok, want: []diagSummary{{"Missing template", "format"}}},
		"unused tmpl":    {body: `inputs = ["a"]  output_dir = "o"  template = "x"  ` + tok, want: []diagSummary{{"Template unused", "template"}}},
		"bad template":   {body: `inputs = ["a"]  output_dir = "o"  format = "template"  template = "{{.x"  ` + tok, want: []diagSummary{{"Invalid template", "template"}}},
		"bad type":       {body: `inputs = ["a"]  output_dir = "o"  tokenizer {  type = "spm"  path = "x"  }`, want: []diagSummary{{"Unsupported tokenizer type", "tokenizer.type"}}},
		"hf encoding":    {body: `inputs = ["a"]  output_dir = "o"  tokenizer {  type = "hf"  path = "x"  encoding = "cl100k_base"  }`, want: []diagSummary{{"Encoding unused", "tokenizer.encoding"}}},
		"bad out format": {body: `inputs = ["a"]  output_dir = "o"  output_format = ["npy", "arrow"]  ` + tok, want: []diagSummary{{"Unsupported output format", "output_format.[1]"}}},
		"split sum":      {body: `inputs = ["a"]  output_dir = "o"  split { train = 0.9 }  ` + tok, want: []diagSummary{{"Split fractions do not add up to 1", "split"}}},
		"on_error":       {body: `inputs = ["a"]  output_dir = "o"  on_error = "ignore"  ` + tok, want: []diagSummary{{"Unsupported on_error", "on_error"}}},
		"workers":        {body: `inputs = ["a"]  output_dir = "o"  workers = 1.5  ` + tok, want: []diagSummary{{"Invalid workers", "workers"}}},
		"no inputs":      {body: `inputs = []  output_dir = "o"  ` + tok, want: []diagSummary{{"No inputs", "inputs"}}},
		// A null input used to be skipped without a word.
		"null input": {body: `inputs = ["a", null]  output_dir = "o"  ` + tok, want: []diagSummary{{"Null element", "inputs.[1]"}}},
		"bad tokenizer": {body: `inputs = ["a"]  output_dir = "o"  tokenizer {  type = "hf"  path = "testdata/bad/wordpiece.tokenizer.json"  }`,
			want: []diagSummary{{"Cannot load the tokenizer", "tokenizer.path"}}},
		"chat":                 {body: `inputs = ["a"]  output_dir = "o"  format = "chat"  train_on = "last_assistant"  ` + tok},
		"bad train_on":         {body: `inputs = ["a"]  output_dir = "o"  format = "chat"  train_on = "completion"  ` + tok, want: []diagSummary{{"Unsupported train_on", "train_on"}}},
		"unused train_on":      {body: `inputs = ["a"]  output_dir = "o"  train_on = "all"  ` + tok, want: []diagSummary{{"Argument unused", "train_on"}}},
		"unused chat_template": {body: `inputs = ["a"]  output_dir = "o"  format = "jsonl"  chat_template = "t.jinja"  ` + tok, want: []diagSummary{{"Argument unused", "chat_template"}}},
		"bad chat template": {body: `inputs = ["a"]  output_dir = "o"  format = "chat"  chat_template = "testdata/bad/unclosed.jinja"  ` + tok,
			want: []diagSummary{{"Cannot load the chat template", "chat_template"}}},
		"no chat template": {body: `inputs = ["a"]  output_dir = "o"  format = "chat"  tokenizer {  type = "hf"  path = "testdata/bad/wordpiece.tokenizer.json"  }  chat_template = "testdata/bad/wordpiece.tokenizer.json"`,
			want: []diagSummary{{"Cannot load the tokenizer", "tokenizer.path"}, {"Cannot load the chat template", "chat_template"}}},
		"good tokenizer": {body: `inputs = ["a"]  output_dir = "o"  tokenizer {  type = "hf"  path = "bpe/testdata/vocab/gpt4o.tokenizer.json.gz"  }`},
	}
	p := New()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags, err := p.ValidateStage(context.Background(), &api.StageRequest{Type: StageType, Name: "x", Config: decodeBody(t, tc.body)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summarize(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// recorder is an EventSink keeping every event.
type recorder struct {
	mu     sync.Mutex
	events []api.Event
}

func (r *recorder) Send(e api.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func writeLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestApplyWritesShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lines []string
	for k := range 40 {
		b, _ := json.Marshal(map[string]string{"body": fmt.Sprintf("Document %d says hello, world. <|endoftext|> stays text.", k)})
		lines = append(lines, string(b))
	}
	writeLines(t, filepath.Join(dir, "a.jsonl"), lines...)
	body := fmt.Sprintf(`
inputs        = ["*.jsonl"]
text_field    = "body"
tokenizer {
  type = "tiktoken"
  path = %q
}
output_dir    = "out"
output_format = ["megatron", "npy"]
split {
  train = 0.75
  valid = 0.25
}
seed    = 3
shuffle = true
`, vocabPath(t, "cl100k_base.tiktoken.gz"))
	rec := &recorder{}
	resp, err := New().ApplyStage(context.Background(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: StageType, Name: "x", Config: decodeBody(t, body), WorkDir: dir},
		RunDir:       t.TempDir(),
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Diagnostics.HasErrors() {
		t.Fatalf("diagnostics: %+v", resp.Diagnostics)
	}
	out := resp.Outputs
	if got := out["documents"].AsBigFloat().String(); got != "40" {
		t.Errorf("documents = %s, want 40", got)
	}
	train := out["train"]
	var trainDocs int
	for it := train.GetAttr("paths").ElementIterator(); it.Next(); {
		_, prefix := it.Element()
		ds, err := shard.ReadMegatron(prefix.AsString())
		if err != nil {
			t.Fatal(err)
		}
		trainDocs += ds.Documents()
	}
	if got := train.GetAttr("documents").AsBigFloat().String(); got != fmt.Sprint(trainDocs) {
		t.Errorf("train documents output %s, shards hold %d", got, trainDocs)
	}
	if train.GetAttr("npy").LengthInt() == 0 || out["valid"].GetAttr("documents").AsBigFloat().Sign() == 0 {
		t.Errorf("want npy shards and a non-empty valid split, got train %#v valid %#v", train, out["valid"])
	}
	var sawProgress, sawArtifact bool
	for _, e := range rec.events {
		sawProgress = sawProgress || e.Progress != nil
		sawArtifact = sawArtifact || (e.Artifact != nil && e.Artifact.Name == "manifest")
	}
	if !sawProgress || !sawArtifact {
		t.Errorf("events lack progress (%v) or the manifest artifact (%v)", sawProgress, sawArtifact)
	}
}

func TestApplyBadInput(t *testing.T) {
	t.Parallel()
	tok := fmt.Sprintf(`tokenizer {  type = "tiktoken"  path = %q  }`, vocabPath(t, "r50k_base.tiktoken.gz"))
	tests := map[string]struct {
		lines       []string
		extra       string
		wantSummary string
		wantDetail  string
		skipped     string
	}{
		"malformed": {lines: []string{`{"text": "a"}`, `{"text": "b"`}, wantSummary: "Bad input record",
			wantDetail: `in.jsonl:2: malformed JSON: unexpected end of JSON input. Fix the record, or set on_error = "skip"`},
		"skip":      {lines: []string{`{"text": "a"}`, `{"text": "b"`, `{"txt": 1}`}, extra: `on_error = "skip"`, skipped: "2"},
		"empty":     {lines: []string{""}, wantSummary: "Data preparation failed", wantDetail: "the inputs hold no records"},
		"no vocab":  {lines: []string{`{"text": "a"}`}, extra: "#", wantSummary: "Cannot load the tokenizer"},
		"bad input": {lines: []string{`{"text": "a"}`}, extra: `inputs = ["nope/*.jsonl"]`, wantSummary: "Input not found", wantDetail: "matches no file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeLines(t, filepath.Join(dir, "in.jsonl"), tc.lines...)
			inputs := `inputs = ["in.jsonl"]`
			tokBlock := tok
			switch {
			case strings.HasPrefix(tc.extra, "inputs"):
				inputs, tc.extra = tc.extra, ""
			case tc.extra == "#":
				tokBlock, tc.extra = `tokenizer {  type = "tiktoken"  path = "missing.tiktoken"  }`, ""
			}
			body := strings.Join([]string{inputs, `output_dir = "out"`, tokBlock, tc.extra}, "  ")
			resp, err := New().ApplyStage(context.Background(), &api.ApplyRequest{
				StageRequest: api.StageRequest{Type: StageType, Name: "x", Config: decodeBody(t, body), WorkDir: dir},
			}, &recorder{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantSummary == "" {
				if resp.Diagnostics.HasErrors() {
					t.Fatalf("diagnostics: %+v", resp.Diagnostics)
				}
				if got := resp.Outputs["skipped"].AsBigFloat().String(); got != tc.skipped {
					t.Errorf("skipped = %s, want %s", got, tc.skipped)
				}
				return
			}
			if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != tc.wantSummary || !strings.Contains(resp.Diagnostics[0].Detail, tc.wantDetail) {
				t.Fatalf("diagnostics %+v, want %q with detail containing %q", resp.Diagnostics, tc.wantSummary, tc.wantDetail)
			}
			if resp.Outputs != nil {
				t.Errorf("a failed stage reported outputs: %v", resp.Outputs)
			}
		})
	}
}

func TestApplyWarnsOfEmptySplit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLines(t, filepath.Join(dir, "in.jsonl"), `{"text": "only one document"}`)
	body := fmt.Sprintf(`inputs = ["in.jsonl"]  output_dir = "out"  tokenizer {  type = "tiktoken"  path = %q  }  split {  train = 0.5  valid = 0.5  }`,
		vocabPath(t, "r50k_base.tiktoken.gz"))
	resp, err := New().ApplyStage(context.Background(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: StageType, Name: "x", Config: decodeBody(t, body), WorkDir: dir},
	}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(resp.Diagnostics)
	if len(got) != 1 || got[0].Summary != "Empty split" || resp.Diagnostics[0].Severity != api.Warning || resp.Diagnostics.HasErrors() {
		t.Errorf("diagnostics %+v, want one Empty split warning", resp.Diagnostics)
	}
}

// TestApplyChat prepares chat records with a chat_template.jinja found
// beside the tokenizer: the outputs name the loss masks and count the
// trained tokens, and a bad record is skipped and counted.
// chatRecords are the records TestApplyChat prepares, as JSONL lines and
// as Parquet rows: a conversation, one without a reply (skipped), and a
// ShareGPT one.
var chatRecords = []string{
	`{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"}]}`,
	`{"messages":[{"role":"user","content":"Hi"}]}`,
	`{"conversations":[{"from":"human","value":"Name a prime."},{"from":"gpt","value":"7"}]}`,
}

type chatTurn struct {
	Role    string `parquet:"role"`
	Content string `parquet:"content"`
}

type shareGPTTurn struct {
	From  string `parquet:"from"`
	Value string `parquet:"value"`
}

// writeChatParquet writes chatRecords as two Parquet files, since one file
// has one conversation column: messages, or conversations.
func writeChatParquet(t *testing.T, dir string) {
	t.Helper()
	type messagesRow struct {
		Messages []chatTurn `parquet:"messages,list"`
	}
	type conversationsRow struct {
		Conversations []shareGPTTurn `parquet:"conversations,list"`
	}
	writeRows(t, filepath.Join(dir, "chat-0.parquet"), []messagesRow{
		{Messages: []chatTurn{{"user", "Hi"}, {"assistant", "Hello!"}}},
		{Messages: []chatTurn{{"user", "Hi"}}},
	})
	writeRows(t, filepath.Join(dir, "chat-1.parquet"), []conversationsRow{
		{Conversations: []shareGPTTurn{{"human", "Name a prime."}, {"gpt", "7"}}},
	})
}

func writeRows[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeChatGzip(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(strings.Join(chatRecords, "\n") + "\n"))
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApplyChat prepares the same conversations from JSONL, gzipped JSONL
// and Parquet: the same documents, skips and trained tokens come out.
func TestApplyChat(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		inputs string
		write  func(t *testing.T, dir string)
	}{
		"jsonl":    {`["chat.jsonl"]`, func(t *testing.T, dir string) { writeLines(t, filepath.Join(dir, "chat.jsonl"), chatRecords...) }},
		"jsonl.gz": {`["chat.jsonl.gz"]`, func(t *testing.T, dir string) { writeChatGzip(t, filepath.Join(dir, "chat.jsonl.gz")) }},
		"parquet":  {`["chat-*.parquet"]`, writeChatParquet},
	}
	trainedBy := map[string]int64{}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			tc.write(t, dir)
			trainedBy[name] = applyChat(t, dir, tc.inputs)
		})
	}
	if trainedBy["jsonl"] != trainedBy["parquet"] || trainedBy["jsonl"] != trainedBy["jsonl.gz"] {
		t.Errorf("trained tokens by input %v, want the same from each", trainedBy)
	}
}

// applyChat prepares the chat records of inputs in dir and returns how many
// tokens the masks train on.
func applyChat(t *testing.T, dir, inputs string) int64 {
	t.Helper()
	tokDir := filepath.Join(dir, "tok")
	os.Mkdir(tokDir, 0o755)
	vocab, err := os.ReadFile(vocabPath(t, "gpt4o.tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tokDir, "tokenizer.json.gz"), vocab, 0o644)
	os.WriteFile(filepath.Join(tokDir, "chat_template.jinja"), []byte(
		"{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"), 0o644)
	body := `
inputs   = ` + inputs + `
format   = "chat"
on_error = "skip"
tokenizer {
  type = "hf"
  path = "tok/tokenizer.json.gz"
  eos  = "<|endoftext|>"
}
output_dir = "out"
split {
  train = 1
}
`
	resp, err := New().ApplyStage(context.Background(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: StageType, Name: "x", Config: decodeBody(t, body), WorkDir: dir},
	}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Diagnostics.HasErrors() {
		t.Fatalf("diagnostics: %+v", resp.Diagnostics)
	}
	train := resp.Outputs["train"]
	prefix := train.GetAttr("megatron").Index(cty.NumberIntVal(0)).AsString()
	masks := train.GetAttr("masks")
	if masks.LengthInt() != 1 || masks.Index(cty.NumberIntVal(0)).AsString() != prefix+".mask" {
		t.Fatalf("masks %#v, want [%s.mask]", masks, prefix)
	}
	mask, err := shard.ReadMegatron(prefix + ".mask")
	if err != nil {
		t.Fatal(err)
	}
	var trained int64
	for k := range mask.Documents() {
		for _, v := range mask.Document(k) {
			trained += int64(v)
		}
	}
	got := map[string]string{
		"skipped":        resp.Outputs["skipped"].AsBigFloat().String(),
		"documents":      train.GetAttr("documents").AsBigFloat().String(),
		"trained_tokens": train.GetAttr("trained_tokens").AsBigFloat().String(),
	}
	want := map[string]string{"skipped": "1", "documents": "2", "trained_tokens": fmt.Sprint(trained)}
	if diff := cmp.Diff(want, got); diff != "" || trained == 0 {
		t.Errorf("outputs (-want +got), %d trained tokens in the masks:\n%s", trained, diff)
	}
	return trained
}

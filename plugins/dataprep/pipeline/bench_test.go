package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gpuflow/gpuflow/plugins/dataprep/chat"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
)

// BenchmarkRun runs the whole pipeline (JSONL reading, decoding,
// tokenizing with cl100k_base, writing Megatron shards) on the Jargon File
// from Debian's jargon-text package (apt-get install jargon-text), one
// paragraph per record, the whole repeated benchPasses times, or on the
// text file GPUFLOW_TOKENIZER_CORPUS names:
//
//	go test -run '^$' -bench Run -benchtime 10x ./plugins/dataprep/pipeline/
func BenchmarkRun(b *testing.B) {
	in := benchJSONL(b)
	workerCounts := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		workerCounts = append(workerCounts, n)
	}
	for _, workers := range workerCounts {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			st, _ := os.Stat(in)
			b.SetBytes(st.Size())
			var tokens int64
			for b.Loop() {
				cfg := testConfig(b, []string{in}, b.TempDir())
				cfg.Formats = []string{FormatMegatron}
				cfg.ShardTokens = 0
				cfg.Shuffle = false
				cfg.Workers = workers
				res, err := Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				tokens = res.Tokens
			}
			perSecond := float64(tokens) * float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(float64(tokens), "tokens/op")
			b.ReportMetric(perSecond, "tokens/s")
			b.ReportMetric(perSecond/float64(workers), "tokens/s/worker")
		})
	}
}

// benchPasses is how many times the corpus is repeated, so that the fixed
// cost of a run (syncing each shard and the manifest to disk) weighs little
// against tokenizing.
const benchPasses = 8

// benchJSONL writes the corpus's paragraphs as JSONL records.
func benchJSONL(b *testing.B) string {
	b.Helper()
	path := os.Getenv("GPUFLOW_TOKENIZER_CORPUS")
	if path == "" {
		path = "/usr/share/doc/jargon-text/jargon.txt.gz"
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		b.Skipf("no corpus at %s: run `apt-get install jargon-text` or set GPUFLOW_TOKENIZER_CORPUS to a text file", path)
	}
	if err != nil {
		b.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if data, err = io.ReadAll(gz); err != nil {
			b.Fatal(err)
		}
	}
	var out bytes.Buffer
	for pass := range benchPasses {
		for _, p := range strings.Split(string(data), "\n\n") {
			if strings.TrimSpace(p) == "" {
				continue
			}
			line, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("%d %s", pass, p)})
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	in := filepath.Join(b.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(in, out.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return in
}

// BenchmarkChat runs the chat pipeline (records rendered by Mistral's chat
// template, masks on the assistant's replies, cl100k_base) on the corpus
// of BenchmarkRun made into conversations of two exchanges, a paragraph a
// turn:
//
//	go test -run '^$' -bench Chat -benchtime 3x ./plugins/dataprep/pipeline/
func BenchmarkChat(b *testing.B) {
	in := benchChatJSONL(b, benchJSONL(b))
	tmpl, err := chat.Load(filepath.Join("..", "chat", "testdata", "templates", "mistral.jinja"), "<s>", "</s>")
	if err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(in)
	b.SetBytes(st.Size())
	var tokens int64
	for b.Loop() {
		cfg := testConfig(b, []string{in}, b.TempDir())
		cfg.Decoder = input.NewChatDecoder()
		cfg.Chat = &Chat{Template: tmpl, TrainOn: chat.TrainAssistant, TemplateID: "mistral"}
		cfg.Formats = []string{FormatMegatron}
		cfg.ShardTokens = 0
		cfg.Shuffle = false
		cfg.Workers = 1
		res, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		tokens = res.Tokens
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// benchChatJSONL turns the text records of in into conversations: four
// records make a user turn, a reply, a second user turn and its reply.
func benchChatJSONL(b *testing.B, in string) string {
	b.Helper()
	data, err := os.ReadFile(in)
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct{ Text string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			b.Fatal(err)
		}
		texts = append(texts, rec.Text)
	}
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var out bytes.Buffer
	for k := 0; k+4 <= len(texts); k += 4 {
		line, _ := json.Marshal(map[string][]message{"messages": {
			{"user", texts[k]}, {"assistant", texts[k+1]}, {"user", texts[k+2]}, {"assistant", texts[k+3]},
		}})
		out.Write(line)
		out.WriteByte('\n')
	}
	path := filepath.Join(b.TempDir(), "chat.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

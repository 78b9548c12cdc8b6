package bpe

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The benchmarks tokenize a real English corpus: the Jargon File as Debian's
// jargon-text package installs it (apt-get install jargon-text), or any
// text file (gzipped or not) named by GPUFLOW_TOKENIZER_CORPUS. Each
// paragraph is one document. The vocabulary is a file of testdata/vocab, or
// the one GPUFLOW_TOKENIZER_VOCAB names (its kind is taken from its name).
// BenchmarkEncode is the figure per core; BenchmarkEncodeParallel runs one
// worker per GOMAXPROCS:
//
//	GOMAXPROCS=1 go test -run '^$' -bench 'Encode$' -benchtime 20x ./plugins/dataprep/bpe/
//	go test -run '^$' -bench 'EncodeParallel' -benchtime 20x ./plugins/dataprep/bpe/
const defaultBenchCorpus = "/usr/share/doc/jargon-text/jargon.txt.gz"

func benchCorpus(b *testing.B) []string {
	b.Helper()
	path := os.Getenv("GPUFLOW_TOKENIZER_CORPUS")
	if path == "" {
		path = defaultBenchCorpus
	}
	data, err := readMaybeGzip(path)
	if os.IsNotExist(err) {
		b.Skipf("no corpus at %s: run `apt-get install jargon-text` or set GPUFLOW_TOKENIZER_CORPUS to a text file", path)
	}
	if err != nil {
		b.Fatal(err)
	}
	var docs []string
	for _, p := range strings.Split(string(data), "\n\n") {
		if strings.TrimSpace(p) != "" {
			docs = append(docs, p)
		}
	}
	return docs
}

func readMaybeGzip(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return data, err
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(gz)
}

var benchVocabs = []struct {
	name, file string
	kind       Kind
}{
	{"cl100k_base", "cl100k_base.tiktoken.gz", KindTiktoken},
	{"o200k_base", "o200k_base.tiktoken.gz", KindTiktoken},
	{"gpt4o-hf", "gpt4o.tokenizer.json.gz", KindHF},
}

func benchTokenizers(b *testing.B) map[string]*Tokenizer {
	b.Helper()
	out := make(map[string]*Tokenizer)
	if path := os.Getenv("GPUFLOW_TOKENIZER_VOCAB"); path != "" {
		kind := KindTiktoken
		if strings.Contains(filepath.Base(path), ".json") {
			kind = KindHF
		}
		tok, err := Open(path, kind, "")
		if err != nil {
			b.Fatal(err)
		}
		out[filepath.Base(path)] = tok
		return out
	}
	for _, v := range benchVocabs {
		out[v.name] = loadVocab(b, v.file, v.kind)
	}
	return out
}

func corpusBytes(docs []string) int64 {
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	return n
}

// BenchmarkEncode encodes the corpus on one goroutine: tokens/s per core.
func BenchmarkEncode(b *testing.B) {
	docs := benchCorpus(b)
	for name, tok := range benchTokenizers(b) {
		b.Run(name, func(b *testing.B) {
			enc := tok.NewEncoder()
			b.SetBytes(corpusBytes(docs))
			var tokens int
			var ids []uint32
			for b.Loop() {
				tokens = 0
				for _, d := range docs {
					ids = enc.Encode(ids[:0], d)
					tokens += len(ids)
				}
			}
			b.ReportMetric(float64(tokens), "tokens/op")
			b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkEncodeParallel encodes the corpus with one worker per GOMAXPROCS,
// each with its own Encoder taking documents in turn: tokens/s in total and
// per core.
func BenchmarkEncodeParallel(b *testing.B) {
	docs := benchCorpus(b)
	for name, tok := range benchTokenizers(b) {
		b.Run(name, func(b *testing.B) {
			workers := runtime.GOMAXPROCS(0)
			encs := make([]*Encoder, workers)
			for k := range encs {
				encs[k] = tok.NewEncoder()
			}
			b.SetBytes(corpusBytes(docs))
			var tokens atomic.Int64
			for b.Loop() {
				tokens.Store(0)
				encodeAll(encs, docs, &tokens)
			}
			perSecond := float64(tokens.Load()) * float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(float64(tokens.Load()), "tokens/op")
			b.ReportMetric(perSecond, "tokens/s")
			b.ReportMetric(perSecond/float64(workers), "tokens/s/core")
		})
	}
}

func encodeAll(encs []*Encoder, docs []string, tokens *atomic.Int64) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, enc := range encs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []uint32
			n := 0
			for k := next.Add(1) - 1; k < int64(len(docs)); k = next.Add(1) - 1 {
				ids = enc.Encode(ids[:0], docs[k])
				n += len(ids)
			}
			tokens.Add(int64(n))
		}()
	}
	wg.Wait()
}

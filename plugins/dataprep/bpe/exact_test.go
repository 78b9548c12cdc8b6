package bpe

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The comparison with Hugging Face tokenizers on a large mixed corpus runs
// where GPUFLOW_TOKENIZER_REF names the folder scripts/tokenizer/exactness.sh
// fills: corpus.jsonl, and per vocabulary NAME/tokenizer.json (with its
// tokenizer_config.json) and NAME.ids, the reference's ids of each document
// (a little-endian uint32 count, then the ids). The test and the benchmark
// skip without it:
//
//	GPUFLOW_TOKENIZER_REF=DIR go test -run Reference ./plugins/dataprep/bpe/
//	GPUFLOW_TOKENIZER_REF=DIR GOMAXPROCS=1 go test -run '^$' -bench Reference -benchtime 3x ./plugins/dataprep/bpe/
func referenceDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("GPUFLOW_TOKENIZER_REF")
	if dir == "" {
		tb.Skip("GPUFLOW_TOKENIZER_REF is not set; scripts/tokenizer/exactness.sh sets it")
	}
	return dir
}

func referenceCorpus(tb testing.TB, dir string) []string {
	tb.Helper()
	f, err := os.Open(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var docs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, rec.Text)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return docs
}

func referenceVocabs(tb testing.TB, dir string) []string {
	tb.Helper()
	idFiles, err := filepath.Glob(filepath.Join(dir, "*.ids"))
	if err != nil || len(idFiles) == 0 {
		tb.Fatalf("no NAME.ids files in %s (%v)", dir, err)
	}
	var names []string
	for _, f := range idFiles {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".ids"))
	}
	return names
}

// cpuSeconds is the user and system time the process has used.
func cpuSeconds(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func readReferenceIDs(t *testing.T, path string, docs int) [][]uint32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]uint32, 0, docs)
	for len(data) >= 4 {
		n := int(binary.LittleEndian.Uint32(data))
		data = data[4:]
		ids := make([]uint32, n)
		for k := range ids {
			ids[k] = binary.LittleEndian.Uint32(data[4*k:])
		}
		data = data[4*n:]
		out = append(out, ids)
	}
	if len(out) != docs {
		t.Fatalf("%s holds %d documents, the corpus %d", path, len(out), docs)
	}
	return out
}

// TestReferenceCorpus checks that every document encodes to the reference's
// ids: the post-processor's BOS, then the text with special tokens matched,
// as Hugging Face's encode does.
func TestReferenceCorpus(t *testing.T) {
	dir := referenceDir(t)
	docs := referenceCorpus(t, dir)
	for _, name := range referenceVocabs(t, dir) {
		t.Run(name, func(t *testing.T) {
			tok, err := Open(filepath.Join(dir, name, "tokenizer.json"), KindHF, "")
			if err != nil {
				t.Fatal(err)
			}
			want := readReferenceIDs(t, filepath.Join(dir, name+".ids"), len(docs))
			enc := tok.NewEncoder()
			var prefix []uint32
			if id, ok := tok.SpecialID(tok.templateBOS); ok {
				prefix = []uint32{id}
			}
			bad, tokens := 0, 0
			for k, text := range docs {
				got := enc.EncodeSpecial(append([]uint32(nil), prefix...), text)
				tokens += len(got)
				if diff := cmp.Diff(want[k], got, cmpEmptyIsNil); diff != "" {
					if bad++; bad <= 3 {
						t.Errorf("document %d (%d bytes, starts %q): ids (-reference +got):\n%.3000s", k, len(text), text[:min(len(text), 80)], diff)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d documents differ", bad, len(docs))
			}
			t.Logf("%d documents, %d tokens equal", len(docs)-bad, tokens)
		})
	}
}

// BenchmarkReference encodes the reference corpus, one vocabulary at a time,
// as the pipeline does (one encoder, document after document). It reports
// tokens per CPU-second of the process, the figure per core that stays
// comparable on a machine others share; reference.js reports the same.
func BenchmarkReference(b *testing.B) {
	dir := referenceDir(b)
	docs := referenceCorpus(b, dir)
	for _, name := range referenceVocabs(b, dir) {
		b.Run(name, func(b *testing.B) {
			tok, err := Open(filepath.Join(dir, name, "tokenizer.json"), KindHF, "")
			if err != nil {
				b.Fatal(err)
			}
			var bytes int64
			for _, d := range docs {
				bytes += int64(len(d))
			}
			b.SetBytes(bytes)
			tokens := 0
			var ids []uint32
			cpu0 := cpuSeconds(b)
			for b.Loop() {
				enc := tok.NewEncoder()
				tokens = 0
				for _, d := range docs {
					ids = enc.EncodeSpecial(ids[:0], d)
					tokens += len(ids)
				}
			}
			b.ReportMetric(float64(tokens)*float64(b.N)/(cpuSeconds(b)-cpu0), "tokens/cpu-s")
		})
	}
}

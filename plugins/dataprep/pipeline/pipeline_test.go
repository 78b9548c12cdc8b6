package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
	"github.com/gpuflow/gpuflow/plugins/dataprep/shard"
)

var (
	tokenizerOnce sync.Once
	tokenizer     *bpe.Tokenizer
	tokenizerErr  error
)

func testTokenizer(t testing.TB) *bpe.Tokenizer {
	t.Helper()
	tokenizerOnce.Do(func() {
		tokenizer, tokenizerErr = bpe.Open(filepath.Join("..", "bpe", "testdata", "vocab", "cl100k_base.tiktoken.gz"), bpe.KindTiktoken, "")
	})
	if tokenizerErr != nil {
		t.Fatal(tokenizerErr)
	}
	return tokenizer
}

// corpusTexts are varied documents, so that groups and splits get uneven.
func corpusTexts(n int) []string {
	words := []string{"the", "GPU", "trains", "fast", "数据", "données", "😀", "x=1;", "\n", "  ", "don't", "1234"}
	texts := make([]string, n)
	for k := range texts {
		var b strings.Builder
		for w := range 3 + (k*7)%40 {
			b.WriteString(words[(k+w*w)%len(words)])
			b.WriteByte(' ')
		}
		texts[k] = fmt.Sprintf("doc %d: %s", k, b.String())
	}
	return texts
}

func writeJSONL(t *testing.T, dir, name string, texts []string) string {
	t.Helper()
	var b strings.Builder
	for _, text := range texts {
		line, _ := json.Marshal(map[string]string{"text": text})
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func testConfig(t testing.TB, files []string, out string) Config {
	t.Helper()
	dec, err := input.NewJSONLDecoder("text")
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Files:       files,
		Decoder:     dec,
		Tokenizer:   testTokenizer(t),
		TokenizerID: "cl100k_base",
		EOS:         "<|endoftext|>",
		OutputDir:   out,
		Formats:     []string{FormatMegatron, FormatNpy},
		Splits:      map[string]float64{"train": 0.8, "valid": 0.2},
		Seed:        7,
		Shuffle:     true,
		ShardTokens: 700,
	}
}

// folderContents maps each file of dir to its content.
func folderContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

func TestOutputIndependentOfWorkers(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	files := []string{
		writeJSONL(t, in, "a.jsonl", corpusTexts(300)),
		writeJSONL(t, in, "b.jsonl", corpusTexts(50)),
	}
	var first map[string]string
	for _, workers := range []int{1, 3, 8} {
		cfg := testConfig(t, files, filepath.Join(t.TempDir(), "out"))
		cfg.Workers = workers
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Groups < 3 {
			t.Fatalf("only %d groups: the test means to cover several", res.Groups)
		}
		got := folderContents(t, cfg.OutputDir)
		if first == nil {
			first = got
			continue
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("output with %d workers differs from 1 worker (-1 +%d):\n%.2000s", workers, workers, diff)
		}
	}
}

// TestShardsHoldEveryDocument reads the shards back and checks that every
// document is in exactly one split, in both formats, with its EOS.
func TestShardsHoldEveryDocument(t *testing.T) {
	t.Parallel()
	texts := corpusTexts(200)
	cfg := testConfig(t, []string{writeJSONL(t, t.TempDir(), "in.jsonl", texts)}, t.TempDir())
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := cfg.Tokenizer.SpecialID(cfg.EOS)
	var decoded []string
	for name, split := range res.Splits {
		var fromMegatron []uint32
		for _, prefix := range split.Megatron {
			ds, err := shard.ReadMegatron(prefix)
			if err != nil {
				t.Fatal(err)
			}
			for k := range ds.Documents() {
				doc := ds.Document(k)
				if doc[len(doc)-1] != eos {
					t.Fatalf("%s document %d does not end with EOS", prefix, k)
				}
				text, err := cfg.Tokenizer.Decode(doc[:len(doc)-1])
				if err != nil {
					t.Fatal(err)
				}
				decoded = append(decoded, string(text))
				fromMegatron = append(fromMegatron, doc...)
			}
		}
		var fromNpy []uint32
		for _, path := range split.Npy {
			tokens, _, err := shard.ReadNpy(path)
			if err != nil {
				t.Fatal(err)
			}
			fromNpy = append(fromNpy, tokens...)
		}
		if !slices.Equal(fromMegatron, fromNpy) {
			t.Errorf("split %s: npy tokens differ from megatron tokens", name)
		}
		if int64(len(fromNpy)) != split.Tokens {
			t.Errorf("split %s: %d tokens in files, result says %d", name, len(fromNpy), split.Tokens)
		}
	}
	slices.Sort(decoded)
	want := slices.Clone(texts)
	slices.Sort(want)
	if diff := cmp.Diff(want, decoded); diff != "" {
		t.Errorf("documents in shards (-input +shards):\n%.2000s", diff)
	}
	valid := res.Splits["valid"].Documents
	if valid == 0 || valid > int64(len(texts))/2 {
		t.Errorf("valid holds %d of %d documents; want about 20%%", valid, len(texts))
	}
}

func TestResumeAfterInterruption(t *testing.T) {
	t.Parallel()
	files := []string{writeJSONL(t, t.TempDir(), "in.jsonl", corpusTexts(400))}
	whole := testConfig(t, files, t.TempDir())
	want, err := Run(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(t, files, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = func(p Progress) {
		if p.Groups == 2 {
			cancel()
		}
	}
	if _, err := Run(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: error %v, want context.Canceled", err)
	}
	m, err := readManifest(cfg.OutputDir)
	if err != nil || m.Complete || len(m.Groups) < 2 {
		t.Fatalf("manifest after interruption: %+v, %v; want 2 or more groups, not complete", m, err)
	}

	cfg.Progress = nil
	got, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Resumed != len(m.Groups) {
		t.Errorf("resumed %d groups, want %d", got.Resumed, len(m.Groups))
	}
	if diff := cmp.Diff(folderContents(t, whole.OutputDir), folderContents(t, cfg.OutputDir)); diff != "" {
		t.Errorf("resumed output differs from an uninterrupted run:\n%.2000s", diff)
	}
	if got.Tokens != want.Tokens || got.Documents != want.Documents {
		t.Errorf("resumed totals %d docs %d tokens, want %d and %d", got.Documents, got.Tokens, want.Documents, want.Tokens)
	}

	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.Resumed != again.Groups {
		t.Errorf("a finished folder was redone: %d of %d groups resumed", again.Resumed, again.Groups)
	}
}

func TestChangedConfigStartsOver(t *testing.T) {
	t.Parallel()
	files := []string{writeJSONL(t, t.TempDir(), "in.jsonl", corpusTexts(300))}
	cfg := testConfig(t, files, t.TempDir())
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.ShardTokens = 1 << 30
	cfg.Formats = []string{FormatNpy}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 0 || res.Groups != 1 {
		t.Errorf("resumed %d, groups %d; want a fresh single group", res.Resumed, res.Groups)
	}
	var names []string
	for name := range folderContents(t, cfg.OutputDir) {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{ManifestName, "train_00000.npy", "valid_00000.npy"}, names); diff != "" {
		t.Errorf("files after a changed configuration (-want +got):\n%s", diff)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	good := `{"text": "fine"}`
	tests := map[string]struct {
		lines   []string
		skip    bool
		wantErr string
		skipped int64
	}{
		"malformed":        {lines: []string{good, good, `{"text": `}, wantErr: "in.jsonl:3: malformed JSON"},
		"missing field":    {lines: []string{good, `{"body": "x"}`}, wantErr: `in.jsonl:2: no field "text"`},
		"empty text":       {lines: []string{`{"text": "  "}`, good}, wantErr: "in.jsonl:1: text is empty"},
		"skipped":          {lines: []string{good, `{"text": `, `{"body": "x"}`, good}, skip: true, skipped: 2},
		"empty input":      {lines: nil, wantErr: "the inputs hold no records"},
		"only blank lines": {lines: []string{"", "  "}, wantErr: "the inputs hold no records"},
		"all skipped":      {lines: []string{`{`, `[]`}, skip: true, wantErr: "all 2 input records were skipped"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "in.jsonl")
			os.WriteFile(path, []byte(strings.Join(tc.lines, "\n")), 0o644)
			cfg := testConfig(t, []string{path}, filepath.Join(dir, "out"))
			cfg.SkipErrors = tc.skip
			res, err := Run(context.Background(), cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if m, _ := readManifest(cfg.OutputDir); m != nil && m.Complete {
					t.Errorf("a failed run was recorded complete")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Skipped != tc.skipped {
				t.Errorf("skipped %d, want %d", res.Skipped, tc.skipped)
			}
		})
	}
}

func TestSplitAssignment(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		splits map[string]float64
		want   map[string]float64 // fraction of 100000 records
	}{
		"99/1":      {splits: map[string]float64{"train": 0.99, "valid": 0.01}, want: map[string]float64{"train": 0.99, "valid": 0.01}},
		"all train": {splits: map[string]float64{"train": 1, "valid": 0}, want: map[string]float64{"train": 1}},
		"three":     {splits: map[string]float64{"train": 0.5, "valid": 0.25, "test": 0.25}, want: map[string]float64{"train": 0.5, "valid": 0.25, "test": 0.25}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSplitter(tc.splits)
			counts := make(map[string]float64)
			const n = 100000
			for k := range int64(n) {
				counts[s.names[s.assign(3, k)]] += 1.0 / n
			}
			for split, want := range tc.want {
				if d := counts[split] - want; d > 0.005 || d < -0.005 {
					t.Errorf("split %s got %.4f of records, want %.4f", split, counts[split], want)
				}
			}
			for split := range counts {
				if _, ok := tc.want[split]; !ok {
					t.Errorf("split %s got records, want none", split)
				}
			}
		})
	}
}

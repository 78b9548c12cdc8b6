package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
)

// Batch bounds: a batch is the unit of work handed to a worker.
const (
	batchRecords = 512
	batchBytes   = 4 << 20
)

// item is one record on its way through the workers: its data going in, its
// document (and, for chat records, its loss mask) or error coming out.
type item struct {
	rec  input.Record
	doc  []uint32
	mask []uint8
	err  error
}

type batch struct {
	seq   int64
	first int64 // record number of items[0]
	items []item
	bytes int64 // input bytes read for this batch
}

// Run prepares cfg.OutputDir, resuming after the groups a previous run with
// the same fingerprint finished.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.OutputDir, 0o755); err != nil {
		return nil, err
	}
	fp, err := cfg.fingerprint()
	if err != nil {
		return nil, err
	}
	m, err := readManifest(cfg.OutputDir)
	if err != nil {
		return nil, err
	}
	splits := slices.Sorted(maps.Keys(cfg.Splits))
	if m != nil && m.Fingerprint == fp {
		if m.Complete {
			return newResult(m, cfg.OutputDir, splits, len(m.Groups)), nil
		}
	} else {
		if m != nil {
			removeFiles(cfg.OutputDir, m.files())
		}
		m = &Manifest{FormatVersion: manifestVersion, Fingerprint: fp}
		if err := m.write(cfg.OutputDir); err != nil {
			return nil, err
		}
	}
	r := newRunner(&cfg, m)
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	return newResult(m, cfg.OutputDir, splits, r.resumed), nil
}

// removeFiles deletes the shards an earlier, different run recorded, so
// none of them is mistaken for part of this run's output.
func removeFiles(dir string, files []string) {
	for _, f := range files {
		os.Remove(filepath.Join(dir, f))
	}
}

type runner struct {
	cfg      *Config
	manifest *Manifest
	splitter splitter
	resumed  int
	workers  int
	bos, eos []uint32
	// Collector state.
	group      *group
	inputBytes int64
	lastReport time.Time
}

func newRunner(cfg *Config, m *Manifest) *runner {
	r := &runner{
		cfg:      cfg,
		manifest: m,
		splitter: newSplitter(cfg.Splits),
		resumed:  len(m.Groups),
		workers:  cfg.Workers,
	}
	if r.workers <= 0 {
		r.workers = runtime.GOMAXPROCS(0)
	}
	if id, ok := cfg.Tokenizer.SpecialID(cfg.BOS); ok && cfg.BOS != "" {
		r.bos = []uint32{id}
	}
	if id, ok := cfg.Tokenizer.SpecialID(cfg.EOS); ok && cfg.EOS != "" {
		r.eos = []uint32{id}
	}
	r.group = newGroup(len(m.Groups), len(r.splitter.names))
	return r
}

func (r *runner) run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	todo := make(chan *batch, r.workers)
	done := make(chan *batch, r.workers)
	g.Go(func() error {
		defer close(todo)
		return r.read(ctx, todo)
	})
	var workers sync.WaitGroup
	for range r.workers {
		workers.Add(1)
		g.Go(func() error {
			defer workers.Done()
			return r.work(ctx, todo, done)
		})
	}
	go func() {
		workers.Wait()
		close(done)
	}()
	g.Go(func() error { return r.collect(ctx, done) })
	return g.Wait()
}

// read streams records in batches, skipping those a resumed run has done.
func (r *runner) read(ctx context.Context, todo chan<- *batch) error {
	rd := r.cfg.Decoder.NewReader(r.cfg.Files)
	defer rd.Close()
	skip := r.manifest.endRecord()
	var record, seq int64
	b := &batch{}
	send := func() error {
		if len(b.items) == 0 {
			return nil
		}
		select {
		case todo <- b:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		seq++
		b = &batch{seq: seq, first: record}
		return nil
	}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return send()
		}
		var recErr *input.RecordError
		if err != nil && !errors.As(err, &recErr) {
			return err
		}
		record++
		if record <= skip {
			b.first = record
			b.bytes += int64(len(rec.Data)) + 1 // counted as read for progress
			continue
		}
		it := item{rec: input.Record{Pos: rec.Pos, Data: slices.Clone(rec.Data)}, err: err}
		b.items = append(b.items, it)
		b.bytes += int64(len(rec.Data)) + 1
		if len(b.items) >= batchRecords || b.bytes >= batchBytes {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// work decodes and tokenizes batches; each worker has its own encoder.
func (r *runner) work(ctx context.Context, todo <-chan *batch, done chan<- *batch) error {
	enc := r.cfg.Tokenizer.NewEncoder()
	for b := range todo {
		for k := range b.items {
			r.tokenize(enc, &b.items[k])
		}
		select {
		case done <- b:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

func (r *runner) tokenize(enc *bpe.Encoder, it *item) {
	defer func() { it.rec.Data = nil }()
	if it.err != nil {
		return
	}
	text, err := r.cfg.Decoder.Decode(it.rec)
	if err != nil {
		it.err = err
		return
	}
	if strings.TrimSpace(text) == "" {
		it.err = &input.RecordError{Pos: it.rec.Pos, Reason: "text is empty"}
		return
	}
	if r.cfg.Chat != nil {
		r.tokenizeChat(enc, it, text)
		return
	}
	doc := make([]uint32, 0, len(text)/4+len(r.bos)+len(r.eos))
	doc = append(doc, r.bos...)
	if r.cfg.ParseSpecial {
		doc = enc.EncodeSpecial(doc, text)
	} else {
		doc = enc.Encode(doc, text)
	}
	it.doc = append(doc, r.eos...)
}

// collect takes finished batches back into input order and fills groups.
func (r *runner) collect(ctx context.Context, done <-chan *batch) error {
	pending := make(map[int64]*batch)
	var next int64
	var last int64 = r.manifest.endRecord()
	for b := range done {
		pending[b.seq] = b
		for b := pending[next]; b != nil; b = pending[next] {
			delete(pending, next)
			next++
			end, err := r.take(b)
			if err != nil {
				return err
			}
			last = end
			r.report(false)
		}
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if r.group.documents > 0 || r.group.skipped > 0 {
		if err := r.flush(last); err != nil {
			return err
		}
	}
	return r.finish()
}

// take adds a batch's documents to the current group, flushing it when it
// is full, and returns the number of records consumed.
func (r *runner) take(b *batch) (int64, error) {
	r.inputBytes += b.bytes
	for k, it := range b.items {
		record := b.first + int64(k)
		if it.err != nil {
			if !r.cfg.SkipErrors {
				return 0, it.err
			}
			r.group.skipped++
			continue
		}
		r.group.add(r.splitter.assign(r.cfg.Seed, record), it.doc, it.mask)
		if r.group.tokens >= r.cfg.shardTokens() {
			if err := r.flush(record + 1); err != nil {
				return 0, err
			}
		}
	}
	return b.first + int64(len(b.items)), nil
}

// flush writes the current group, records it in the manifest and starts
// the next.
func (r *runner) flush(endRecord int64) error {
	g, err := r.group.write(r.cfg, r.splitter.names)
	if err != nil {
		return err
	}
	g.EndRecord = endRecord
	r.manifest.Groups = append(r.manifest.Groups, g)
	if err := r.manifest.write(r.cfg.OutputDir); err != nil {
		return err
	}
	r.group = newGroup(len(r.manifest.Groups), len(r.splitter.names))
	r.report(true)
	return nil
}

func (r *runner) finish() error {
	res := newResult(r.manifest, r.cfg.OutputDir, nil, 0)
	if res.Documents == 0 {
		if res.Skipped > 0 {
			return fmt.Errorf("all %d input records were skipped as unusable; no document is left", res.Skipped)
		}
		return fmt.Errorf("the inputs hold no records")
	}
	r.manifest.Complete = true
	return r.manifest.write(r.cfg.OutputDir)
}

// report calls the progress callback at most once a second, and always
// when a group is finished.
func (r *runner) report(force bool) {
	if r.cfg.Progress == nil || (!force && time.Since(r.lastReport) < time.Second) {
		return
	}
	r.lastReport = time.Now()
	res := newResult(r.manifest, r.cfg.OutputDir, nil, 0)
	r.cfg.Progress(Progress{
		InputBytes: r.inputBytes,
		InputTotal: inputTotal(r.cfg.Files),
		Documents:  res.Documents + r.group.documents,
		Tokens:     res.Tokens + r.group.tokens,
		Skipped:    res.Skipped + r.group.skipped,
		Groups:     len(r.manifest.Groups),
	})
}

// inputTotal is the size of the inputs, or 0 when some are compressed and
// the decompressed size is unknown.
func inputTotal(files []string) int64 {
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || strings.HasSuffix(f, ".gz") {
			return 0
		}
		n += st.Size()
	}
	return n
}

package shard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// megatronMagic opens every MMIDIDX index file; megatronVersion is the only
// layout version Megatron-LM writes.
const (
	megatronMagic   = "MMIDIDX\x00\x00"
	megatronVersion = 1
)

// megatronCodes are Megatron-LM's DType codes for the types written here.
var megatronCodes = map[DType]uint8{Uint8: 1, Int32: 4, Uint16: 8}

// MegatronWriter streams documents into PREFIX.bin and writes PREFIX.idx on
// Commit: the indexed dataset Megatron-LM's preprocess_data.py writes, one
// sequence per document.
type MegatronWriter struct {
	prefix string
	dtype  DType
	bin    *atomicFile
	sizes  []int32
	buf    []byte
	tokens int64
}

// CreateMegatron starts a shard at prefix (without extension) holding tokens
// of dtype, which must be Uint16 or Int32 (see MegatronDType), or Uint8
// for a loss mask.
func CreateMegatron(prefix string, dtype DType) (*MegatronWriter, error) {
	if _, ok := megatronCodes[dtype]; !ok {
		return nil, fmt.Errorf("megatron shards hold uint8, uint16 or int32 values, not %v", dtype)
	}
	bin, err := createAtomic(prefix + ".bin")
	if err != nil {
		return nil, err
	}
	return &MegatronWriter{prefix: prefix, dtype: dtype, bin: bin}, nil
}

// Add appends one document.
func (w *MegatronWriter) Add(doc []uint32) error {
	if len(doc) > 0x7FFFFFFF {
		return fmt.Errorf("document of %d tokens exceeds the int32 size field", len(doc))
	}
	var err error
	if w.buf, err = appendTokens(w.buf[:0], w.dtype, doc); err != nil {
		return err
	}
	if _, err := w.bin.w.Write(w.buf); err != nil {
		return err
	}
	w.sizes = append(w.sizes, int32(len(doc)))
	w.tokens += int64(len(doc))
	return nil
}

// Documents is the number of documents added so far.
func (w *MegatronWriter) Documents() int { return len(w.sizes) }

// Tokens is the number of tokens added so far.
func (w *MegatronWriter) Tokens() int64 { return w.tokens }

// Commit writes the index and puts both files under their final names. The
// files are the shard's only when Commit returns nil.
func (w *MegatronWriter) Commit() error {
	idx, err := createAtomic(w.prefix + ".idx")
	if err != nil {
		w.bin.abort()
		return err
	}
	if _, err := idx.w.Write(encodeMegatronIndex(w.dtype, w.sizes)); err != nil {
		idx.abort()
		w.bin.abort()
		return err
	}
	if err := w.bin.commit(); err != nil {
		idx.abort()
		return err
	}
	return idx.commit()
}

// Abort drops the shard; nothing appears under its final names.
func (w *MegatronWriter) Abort() { w.bin.abort() }

// Bytes is the size of the .bin and .idx files Commit writes.
func (w *MegatronWriter) Bytes() int64 {
	return w.tokens*int64(w.dtype.Size()) + int64(megatronIndexSize(len(w.sizes)))
}

func megatronIndexSize(n int) int {
	return len(megatronMagic) + 8 + 1 + 8 + 8 + 4*n + 8*n + 8*(n+1)
}

// encodeMegatronIndex lays out the index: magic, version, dtype code,
// sequence count, document count, then sizes (int32), byte pointers (int64)
// and document boundaries (int64, one more than there are documents).
func encodeMegatronIndex(dtype DType, sizes []int32) []byte {
	n := len(sizes)
	b := make([]byte, 0, megatronIndexSize(n))
	b = append(b, megatronMagic...)
	b = binary.LittleEndian.AppendUint64(b, megatronVersion)
	b = append(b, megatronCodes[dtype])
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	b = binary.LittleEndian.AppendUint64(b, uint64(n+1))
	for _, s := range sizes {
		b = binary.LittleEndian.AppendUint32(b, uint32(s))
	}
	var pointer int64
	for _, s := range sizes {
		b = binary.LittleEndian.AppendUint64(b, uint64(pointer))
		pointer += int64(s) * int64(dtype.Size())
	}
	for k := 0; k <= n; k++ {
		b = binary.LittleEndian.AppendUint64(b, uint64(k))
	}
	return b
}

// MegatronDataset is an indexed dataset read back from disk.
type MegatronDataset struct {
	DType    DType
	Sizes    []int32
	Pointers []int64
	// DocIdx holds, for each document boundary, the index of the first
	// sequence after it.
	DocIdx []int64
	bin    []byte
}

// ReadMegatron reads PREFIX.idx and PREFIX.bin and checks that they agree.
func ReadMegatron(prefix string) (*MegatronDataset, error) {
	idx, err := os.ReadFile(prefix + ".idx")
	if err != nil {
		return nil, err
	}
	d, err := decodeMegatronIndex(idx)
	if err != nil {
		return nil, fmt.Errorf("%s.idx: %w", prefix, err)
	}
	if d.bin, err = os.ReadFile(prefix + ".bin"); err != nil {
		return nil, err
	}
	if err := d.checkBin(); err != nil {
		return nil, fmt.Errorf("%s.bin: %w", prefix, err)
	}
	return d, nil
}

func decodeMegatronIndex(b []byte) (*MegatronDataset, error) {
	r := bytes.NewReader(b)
	head := make([]byte, len(megatronMagic))
	if _, err := r.Read(head); err != nil || string(head) != megatronMagic {
		return nil, fmt.Errorf("not an MMIDIDX index (bad magic)")
	}
	var version, seqs, docs uint64
	var code uint8
	for _, v := range []any{&version, &code, &seqs, &docs} {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return nil, fmt.Errorf("truncated header: %w", err)
		}
	}
	if version != megatronVersion {
		return nil, fmt.Errorf("index version %d; only %d is known", version, megatronVersion)
	}
	d := &MegatronDataset{}
	for dt, c := range megatronCodes {
		if c == code {
			d.DType = dt
		}
	}
	if d.DType == 0 {
		return nil, fmt.Errorf("dtype code %d is not uint8 (1), uint16 (8) or int32 (4)", code)
	}
	header := uint64(len(megatronMagic) + 8 + 1 + 8 + 8)
	if seqs > uint64(len(b)) || docs > uint64(len(b)) || docs == 0 || uint64(len(b)) != header+12*seqs+8*docs {
		return nil, fmt.Errorf("%d bytes do not hold %d sequences and %d document boundaries", len(b), seqs, docs)
	}
	d.Sizes = make([]int32, seqs)
	d.Pointers = make([]int64, seqs)
	d.DocIdx = make([]int64, docs)
	for _, v := range []any{d.Sizes, d.Pointers, d.DocIdx} {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return nil, err
		}
	}
	return d, d.checkIndex()
}

func (d *MegatronDataset) checkIndex() error {
	var pointer int64
	for k, s := range d.Sizes {
		if s < 0 || d.Pointers[k] != pointer {
			return fmt.Errorf("sequence %d: size %d at byte %d, want byte %d", k, s, d.Pointers[k], pointer)
		}
		pointer += int64(s) * int64(d.DType.Size())
	}
	last := len(d.DocIdx) - 1
	if d.DocIdx[0] != 0 || d.DocIdx[last] != int64(len(d.Sizes)) {
		return fmt.Errorf("document index runs from %d to %d, want 0 to %d", d.DocIdx[0], d.DocIdx[last], len(d.Sizes))
	}
	for k := 1; k <= last; k++ {
		if d.DocIdx[k] < d.DocIdx[k-1] {
			return fmt.Errorf("document index decreases at %d", k)
		}
	}
	return nil
}

func (d *MegatronDataset) checkBin() error {
	var want int64
	for _, s := range d.Sizes {
		want += int64(s) * int64(d.DType.Size())
	}
	if int64(len(d.bin)) != want {
		return fmt.Errorf("%d bytes, the index says %d", len(d.bin), want)
	}
	return nil
}

// Documents is the number of documents.
func (d *MegatronDataset) Documents() int { return len(d.DocIdx) - 1 }

// Document returns the tokens of document k.
func (d *MegatronDataset) Document(k int) []uint32 {
	first, end := d.DocIdx[k], d.DocIdx[k+1]
	var out []uint32
	for s := first; s < end; s++ {
		start := d.Pointers[s]
		n := int64(d.Sizes[s]) * int64(d.DType.Size())
		out = append(out, decodeTokens(d.bin[start:start+n], d.DType)...)
	}
	return out
}

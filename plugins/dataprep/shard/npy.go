package shard

import (
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// npyHeaderSize is the fixed header this package writes: NumPy format 1.0
// pads its header so the data starts on a 64-byte boundary, and 128 bytes
// hold a shape of any length an int64 can count.
const npyHeaderSize = 128

const npyMagic = "\x93NUMPY"

// NpyWriter streams tokens into a one-dimensional .npy array, as
// numpy.save writes one; the header is filled in by Commit.
type NpyWriter struct {
	dtype  DType
	file   *atomicFile
	buf    []byte
	tokens int64
}

// CreateNpy starts an array at path holding tokens of dtype, which must be
// Uint16 or Uint32 (see NpyDType), or Uint8 for a loss mask.
func CreateNpy(path string, dtype DType) (*NpyWriter, error) {
	if dtype != Uint8 && dtype != Uint16 && dtype != Uint32 {
		return nil, fmt.Errorf("npy shards hold uint8, uint16 or uint32 values, not %v", dtype)
	}
	f, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.w.Write(make([]byte, npyHeaderSize)); err != nil {
		f.abort()
		return nil, err
	}
	return &NpyWriter{dtype: dtype, file: f}, nil
}

// Add appends tokens.
func (w *NpyWriter) Add(tokens []uint32) error {
	var err error
	if w.buf, err = appendTokens(w.buf[:0], w.dtype, tokens); err != nil {
		return err
	}
	if _, err := w.file.w.Write(w.buf); err != nil {
		return err
	}
	w.tokens += int64(len(tokens))
	return nil
}

// Tokens is the number of tokens added so far.
func (w *NpyWriter) Tokens() int64 { return w.tokens }

// Bytes is the size of the file Commit writes.
func (w *NpyWriter) Bytes() int64 { return npyHeaderSize + w.tokens*int64(w.dtype.Size()) }

// Commit writes the header and puts the file under its final name.
func (w *NpyWriter) Commit() error {
	if err := w.file.w.Flush(); err != nil {
		w.file.abort()
		return err
	}
	if _, err := w.file.f.WriteAt(npyHeader(w.dtype, w.tokens), 0); err != nil {
		w.file.abort()
		return err
	}
	return w.file.commit()
}

// Abort drops the array; nothing appears under its final name.
func (w *NpyWriter) Abort() { w.file.abort() }

func npyDescr(d DType) string {
	switch d {
	case Uint8:
		return "|u1"
	case Uint16:
		return "<u2"
	}
	return "<u4"
}

func npyHeader(d DType, n int64) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", npyDescr(d), n)
	pad := npyHeaderSize - len(npyMagic) - 4 - len(dict) - 1
	b := []byte(npyMagic + "\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(npyHeaderSize-len(npyMagic)-4))
	b = append(b, dict...)
	b = append(b, strings.Repeat(" ", pad)...)
	return append(b, '\n')
}

var npyDict = regexp.MustCompile(`^\{'descr': '(\|u1|<u2|<u4)', 'fortran_order': False, 'shape': \((\d+),\), \}\s*$`)

// ReadNpy reads a one-dimensional uint8, or little-endian uint16 or uint32, .npy file
// of format version 1.0, the kind NpyWriter and numpy.save write.
func ReadNpy(path string) ([]uint32, DType, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 10 || string(b[:6]) != npyMagic || b[6] != 1 || b[7] != 0 {
		return nil, 0, fmt.Errorf("%s: not a version 1.0 .npy file", path)
	}
	end := 10 + int(binary.LittleEndian.Uint16(b[8:]))
	if end > len(b) {
		return nil, 0, fmt.Errorf("%s: truncated header", path)
	}
	m := npyDict.FindStringSubmatch(string(b[10:end]))
	if m == nil {
		return nil, 0, fmt.Errorf("%s: header %q is not a 1-D uint8, uint16 or uint32 array", path, b[10:end])
	}
	d := map[string]DType{"|u1": Uint8, "<u2": Uint16, "<u4": Uint32}[m[1]]
	n, _ := strconv.ParseInt(m[2], 10, 64)
	if int64(len(b)-end) != n*int64(d.Size()) {
		return nil, 0, fmt.Errorf("%s: %d data bytes for %d tokens of %v", path, len(b)-end, n, d)
	}
	return decodeTokens(b[end:], d), d, nil
}

package bpe

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
)

// Kind is the format of a vocabulary file.
type Kind string

// The vocabulary formats.
const (
	KindTiktoken Kind = "tiktoken"
	KindHF       Kind = "hf"
)

// Open loads a vocabulary file of the given kind; a name ending in .gz is
// read through gzip. encoding names the tiktoken preset and must be empty
// for Hugging Face files, which describe themselves.
func Open(path string, kind Kind, encoding string) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	var t *Tokenizer
	switch kind {
	case KindTiktoken:
		t, err = ReadTiktoken(r, encoding)
	case KindHF:
		if encoding != "" {
			return nil, fmt.Errorf("%s: a tokenizer.json names its own pattern and special tokens; leave encoding unset", path)
		}
		t, err = ReadHF(r)
	default:
		return nil, fmt.Errorf("unknown tokenizer type %q; want %q or %q", kind, KindTiktoken, KindHF)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

package bpe

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
// for Hugging Face files, which describe themselves. A file named
// tokenizer.json is read with the tokenizer_config.json beside it, where
// there is one, for the tokens that begin and end a document.
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
		var cfg hfConfig
		if cfg, err = readHFConfig(path); err != nil {
			return nil, err
		}
		t, err = readHF(r, cfg)
	default:
		return nil, fmt.Errorf("unknown tokenizer type %q; want %q or %q", kind, KindTiktoken, KindHF)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// readHFConfig reads the tokenizer_config.json beside a tokenizer.json, or
// returns an empty one.
func readHFConfig(path string) (hfConfig, error) {
	var cfg hfConfig
	if base := filepath.Base(path); base != "tokenizer.json" && base != "tokenizer.json.gz" {
		return cfg, nil
	}
	cfgPath := filepath.Join(filepath.Dir(path), "tokenizer_config.json")
	data, err := os.ReadFile(cfgPath)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("%s: %w", cfgPath, err)
	}
	return cfg, nil
}

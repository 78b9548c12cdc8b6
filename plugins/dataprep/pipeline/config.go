package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
)

// Output formats.
const (
	FormatMegatron = "megatron"
	FormatNpy      = "npy"
)

// DefaultShardTokens is the size of a shard group, as the reference FineWeb
// preparation writes 100M-token files.
const DefaultShardTokens = 100_000_000

// Config says what to prepare.
type Config struct {
	// Files are the input files, in order (see input.Expand).
	Files   []string
	Decoder *input.Decoder
	// Tokenizer encodes the text; TokenizerID identifies its vocabulary
	// file (a content hash) for the manifest fingerprint.
	Tokenizer   *bpe.Tokenizer
	TokenizerID string
	// Chat, when set, renders each record as a conversation through the
	// model's chat template and writes a loss mask beside every shard.
	Chat *Chat
	// ParseSpecial makes special-token text in a document its special token;
	// otherwise it is encoded as ordinary text.
	ParseSpecial bool
	// BOS and EOS are special tokens put around every document; "" for none.
	BOS, EOS  string
	OutputDir string
	// Formats lists FormatMegatron and/or FormatNpy.
	Formats []string
	// Splits maps split names to fractions that add up to 1.
	Splits  map[string]float64
	Seed    uint64
	Shuffle bool
	// SkipErrors skips records that cannot be decoded, counting them,
	// instead of failing on the first.
	SkipErrors bool
	// Workers is the number of tokenizing goroutines; 0 means GOMAXPROCS.
	Workers     int
	ShardTokens int64
	// Progress, when set, is called from one goroutine as work advances.
	Progress func(Progress)
}

// Progress reports how far a run has come.
type Progress struct {
	InputBytes, InputTotal int64
	Documents, Tokens      int64
	Skipped                int64
	Groups                 int
}

// Validate checks the configuration, returning the first problem.
func (c *Config) Validate() error {
	switch {
	case len(c.Files) == 0:
		return fmt.Errorf("no input files")
	case c.Decoder == nil || c.Tokenizer == nil:
		return fmt.Errorf("a decoder and a tokenizer are needed")
	case c.OutputDir == "":
		return fmt.Errorf("output_dir is empty")
	case c.ShardTokens < 0:
		return fmt.Errorf("shard_tokens is negative")
	}
	if len(c.Formats) == 0 {
		return fmt.Errorf("output_format is empty; give %q and/or %q", FormatMegatron, FormatNpy)
	}
	for _, f := range c.Formats {
		if f != FormatMegatron && f != FormatNpy {
			return fmt.Errorf("output_format %q is unknown; want %q or %q", f, FormatMegatron, FormatNpy)
		}
	}
	for _, name := range []string{c.BOS, c.EOS} {
		if _, ok := c.Tokenizer.SpecialID(name); name != "" && !ok {
			return fmt.Errorf("%q is not a special token of the tokenizer", name)
		}
	}
	return validateSplits(c.Splits)
}

func validateSplits(splits map[string]float64) error {
	if len(splits) == 0 {
		return fmt.Errorf("split is empty; give e.g. train = 0.99, valid = 0.01")
	}
	sum := 0.0
	for name, f := range splits {
		if f < 0 || math.IsNaN(f) {
			return fmt.Errorf("split %q is %v; fractions are between 0 and 1", name, f)
		}
		sum += f
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("split fractions add up to %v, not 1", sum)
	}
	return nil
}

func (c *Config) shardTokens() int64 {
	if c.ShardTokens == 0 {
		return DefaultShardTokens
	}
	return c.ShardTokens
}

// fingerprint identifies everything the output depends on: the inputs (by
// name, size and modification time), the decoding, the tokenizer and the
// layout settings; not the worker count.
func (c *Config) fingerprint() (string, error) {
	type file struct {
		Name    string
		Size    int64
		ModTime int64
	}
	var files []file
	for _, name := range c.Files {
		st, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		files = append(files, file{name, st.Size(), st.ModTime().UnixNano()})
	}
	formats := slices.Clone(c.Formats)
	slices.Sort(formats)
	b, err := json.Marshal(struct {
		Version      int
		Files        []file
		Decoder      string
		Tokenizer    string
		ParseSpecial bool
		BOS, EOS     string
		Formats      []string
		Splits       map[string]float64
		Seed         uint64
		Shuffle      bool
		SkipErrors   bool
		ShardTokens  int64
		Chat         string `json:",omitempty"`
	}{manifestVersion, files, c.Decoder.Key(), c.TokenizerID, c.ParseSpecial, c.BOS, c.EOS,
		formats, c.Splits, c.Seed, c.Shuffle, c.SkipErrors, c.shardTokens(), c.Chat.key()})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

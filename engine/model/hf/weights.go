package hf

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Weight file names, as transformers writes them.
const (
	SingleFile = "model.safetensors"
	IndexFile  = "model.safetensors.index.json"
)

// maxHeader bounds a safetensors header; real ones are well under a MiB.
const maxHeader = 100 << 20

// safetensors' names for the storage types config.json allows.
var tensorDtypes = map[string]bool{"BF16": true, "F16": true, "F32": true}

// tensorInfo is one entry of a safetensors header.
type tensorInfo struct {
	Dtype string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// CheckWeights checks, from the safetensors headers alone, that dir holds
// every tensor the model needs in the shape config.json implies, in a
// storage type the trainer reads, and that the index names only files
// that are there.
func CheckWeights(dir string, c *Config) error {
	files, err := weightFiles(dir)
	if err != nil {
		return err
	}
	found := map[string]tensorInfo{}
	where := map[string]string{}
	for _, file := range files {
		h, err := readHeader(filepath.Join(dir, file))
		if err != nil {
			return err
		}
		for name, t := range h {
			found[name], where[name] = t, file
		}
	}
	return checkTensors(c.Tensors(), found, where)
}

// weightFiles lists the safetensors files that hold the model: the
// index's, or model.safetensors alone.
func weightFiles(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, SingleFile)); err != nil {
			return nil, fmt.Errorf("%s has neither %s nor %s; copy the model's weights there", dir, SingleFile, IndexFile)
		}
		return []string{SingleFile}, nil
	}
	if err != nil {
		return nil, err
	}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &index); err != nil || len(index.WeightMap) == 0 {
		return nil, fmt.Errorf("%s is not a safetensors index (it needs a weight_map of tensor names to files)", filepath.Join(dir, IndexFile))
	}
	files := slices.Sorted(maps.Keys(invert(index.WeightMap)))
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("%s names %s, which is not in %s; the download is incomplete", IndexFile, f, dir)
		}
	}
	return files, nil
}

func invert(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, v := range m {
		out[v] = true
	}
	return out
}

// readHeader reads a safetensors file's header: an 8-byte little-endian
// length, then that many bytes of JSON.
func readHeader(path string) (map[string]tensorInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var n uint64
	if err := binary.Read(f, binary.LittleEndian, &n); err != nil || n == 0 || n > maxHeader {
		return nil, fmt.Errorf("%s is not a safetensors file (its header length cannot be read)", path)
	}
	raw := map[string]json.RawMessage{}
	if err := json.NewDecoder(io.LimitReader(f, int64(n))).Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s is not a safetensors file (its header is not JSON): %v", path, err)
	}
	out := map[string]tensorInfo{}
	for name, r := range raw {
		if name == "__metadata__" {
			continue
		}
		var t tensorInfo
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, fmt.Errorf("%s: tensor %s has an unreadable header entry: %v", path, name, err)
		}
		out[name] = t
	}
	return out, nil
}

func checkTensors(want map[string][]int64, found map[string]tensorInfo, where map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(want)) {
		t, ok := lookup(found, name)
		if !ok {
			return fmt.Errorf("no safetensors file holds %s, which config.json's architecture needs", name)
		}
		if !slices.Equal(t.Shape, want[name]) {
			return fmt.Errorf("%s in %s has shape %s, but config.json implies %s", name, where[name], shapeText(t.Shape), shapeText(want[name]))
		}
		if !tensorDtypes[t.Dtype] {
			return fmt.Errorf("%s in %s is stored as %s; the trainer reads BF16, F16 and F32", name, where[name], t.Dtype)
		}
	}
	return nil
}

// lookup finds a tensor under its name, or under the name without its
// first component (transformer., model.), as a checkpoint saved from the
// model without its output head names it; GPT-2's own files do, and the
// trainer reads both.
func lookup(found map[string]tensorInfo, name string) (tensorInfo, bool) {
	if t, ok := found[name]; ok {
		return t, true
	}
	_, base, _ := strings.Cut(name, ".")
	t, ok := found[base]
	return t, ok
}

func shapeText(s []int64) string {
	out := "["
	for i, d := range s {
		if i > 0 {
			out += ", "
		}
		out += strconv.FormatInt(d, 10)
	}
	return out + "]"
}

// Tensors are the tensor names and shapes config.json implies, under
// transformers' names.
func (c *Config) Tensors() map[string][]int64 {
	if c.GPT2() {
		return c.gpt2Tensors()
	}
	h, ffn, vocab := int64(c.HiddenSize), int64(c.IntermediateSize), int64(c.VocabSize)
	q, kv := int64(c.NumAttentionHeads*c.HeadWidth()), int64(c.KVHeads()*c.HeadWidth())
	out := map[string][]int64{"model.embed_tokens.weight": {vocab, h}, "model.norm.weight": {h}}
	if !c.Tied() {
		out["lm_head.weight"] = []int64{vocab, h}
	}
	for i := range c.NumHiddenLayers {
		p := fmt.Sprintf("model.layers.%d.", i)
		out[p+"input_layernorm.weight"] = []int64{h}
		out[p+"post_attention_layernorm.weight"] = []int64{h}
		out[p+"self_attn.q_proj.weight"] = []int64{q, h}
		out[p+"self_attn.k_proj.weight"] = []int64{kv, h}
		out[p+"self_attn.v_proj.weight"] = []int64{kv, h}
		out[p+"self_attn.o_proj.weight"] = []int64{h, q}
		out[p+"mlp.gate_proj.weight"] = []int64{ffn, h}
		out[p+"mlp.up_proj.weight"] = []int64{ffn, h}
		out[p+"mlp.down_proj.weight"] = []int64{h, ffn}
		if c.QKVBias() {
			out[p+"self_attn.q_proj.bias"] = []int64{q}
			out[p+"self_attn.k_proj.bias"] = []int64{kv}
			out[p+"self_attn.v_proj.bias"] = []int64{kv}
		}
		if c.OutputBias() {
			out[p+"self_attn.o_proj.bias"] = []int64{h}
		}
	}
	return out
}

// gpt2Tensors are GPT-2's tensors: its linear layers are Conv1D, stored
// [in, out], and c_attn holds q, k and v side by side.
func (c *Config) gpt2Tensors() map[string][]int64 {
	h, ffn, vocab := int64(c.HiddenSize), int64(c.IntermediateSize), int64(c.VocabSize)
	out := map[string][]int64{"transformer.wte.weight": {vocab, h}, "transformer.wpe.weight": {int64(c.MaxPositionEmbeddings), h},
		"transformer.ln_f.weight": {h}, "transformer.ln_f.bias": {h}}
	if !c.Tied() {
		out["lm_head.weight"] = []int64{vocab, h}
	}
	for i := range c.NumHiddenLayers {
		p := fmt.Sprintf("transformer.h.%d.", i)
		for _, ln := range []string{"ln_1", "ln_2"} {
			out[p+ln+".weight"], out[p+ln+".bias"] = []int64{h}, []int64{h}
		}
		out[p+"attn.c_attn.weight"], out[p+"attn.c_attn.bias"] = []int64{h, 3 * h}, []int64{3 * h}
		out[p+"attn.c_proj.weight"], out[p+"attn.c_proj.bias"] = []int64{h, h}, []int64{h}
		out[p+"mlp.c_fc.weight"], out[p+"mlp.c_fc.bias"] = []int64{h, ffn}, []int64{ffn}
		out[p+"mlp.c_proj.weight"], out[p+"mlp.c_proj.bias"] = []int64{ffn, h}, []int64{h}
	}
	return out
}

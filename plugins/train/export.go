package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// The trainer writes an export's tensors into FOLDER.partial with a
// manifest; gpuflow then names the shards as transformers does, writes the
// index, config.json, generation_config.json, the tokenizer files (or, for
// adapters, adapter_config.json), and renames the folder into place.
const (
	partialSuffix   = ".partial"
	exportManifest  = "gpuflow-export.json"
	hfIndexFile     = "model.safetensors.index.json"
	hfSingleFile    = "model.safetensors"
	generationFile  = "generation_config.json"
	peftConfigFile  = "adapter_config.json"
	peftWeightsFile = "adapter_model.safetensors"
)

// tokenizerFiles are the files transformers' tokenizers read.
var tokenizerFiles = []string{"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
	"vocab.json", "merges.txt", "added_tokens.json", "chat_template.jinja"}

// exportManifestData is what the trainer wrote: each file's tensors under
// transformers' (or PEFT's) names, and the storage type.
type exportManifestData struct {
	Files     map[string][]string `json:"files"`
	SizeBytes int64               `json:"size_bytes"`
	DType     string              `json:"dtype"`
}

// finishExports completes the exports the trainer wrote.
func finishExports(c runConfig) error {
	if c.ExportHF != "" {
		if err := finishFolder(c.ExportHF, func(dir string, m exportManifestData) error { return finishHF(c, dir, m) }); err != nil {
			return fmt.Errorf("exporting the model to %s: %w", c.ExportHF, err)
		}
	}
	if c.ExportPEFT != "" {
		if err := finishFolder(c.ExportPEFT, func(dir string, m exportManifestData) error { return finishPEFT(c, dir) }); err != nil {
			return fmt.Errorf("exporting the adapters to %s: %w", c.ExportPEFT, err)
		}
	}
	return nil
}

// finishFolder completes final+".partial" with finish, then renames it to
// final; a previous export there is replaced only once the new one is whole.
func finishFolder(final string, finish func(string, exportManifestData) error) error {
	dir := final + partialSuffix
	b, err := os.ReadFile(filepath.Join(dir, exportManifest))
	if err != nil {
		return fmt.Errorf("the trainer did not finish writing it: %w", err)
	}
	var m exportManifestData
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("the trainer's %s is unreadable: %w", exportManifest, err)
	}
	if err := finish(dir, m); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, exportManifest)); err != nil {
		return err
	}
	return swapInto(dir, final)
}

// swapInto renames dir to final, moving an existing final aside first and
// removing it only after.
func swapInto(dir, final string) error {
	old := final + ".old"
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(final, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(dir, final); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

// finishHF names the shards, indexes them and writes the configuration
// and tokenizer files.
func finishHF(c runConfig, dir string, m exportManifestData) error {
	if err := nameShards(dir, m); err != nil {
		return err
	}
	cfg, err := hfConfig(c, m.DType)
	if err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, hfConfigFile), cfg); err != nil {
		return err
	}
	if err := writeGenerationConfig(c.Model.HF, dir, cfg); err != nil {
		return err
	}
	return copyTokenizer(c.ExportTokenizer, dir)
}

// nameShards renames the trainer's files, in their sorted order, to
// model-0000I-of-0000N.safetensors with an index, or to model.safetensors
// when there is one.
func nameShards(dir string, m exportManifestData) error {
	files := slices.Sorted(maps.Keys(m.Files))
	if len(files) == 0 {
		return errors.New("the trainer wrote no tensors")
	}
	if len(files) == 1 {
		return os.Rename(filepath.Join(dir, files[0]), filepath.Join(dir, hfSingleFile))
	}
	weights := map[string]string{}
	for i, f := range files {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(files))
		if err := os.Rename(filepath.Join(dir, f), filepath.Join(dir, name)); err != nil {
			return err
		}
		for _, t := range m.Files[f] {
			weights[t] = name
		}
	}
	index := map[string]any{"metadata": map[string]int64{"total_size": m.SizeBytes}, "weight_map": weights}
	return writeJSON(filepath.Join(dir, hfIndexFile), index)
}

// hfConfig is the exported config.json: the source folder's, with the
// storage type of the export, or a Llama's (a GPT-2's for activation
// "gelu") for a model from a preset.
func hfConfig(c runConfig, dtype string) (map[string]any, error) {
	if c.Model.HF == "" && c.Model.Activation == activationGELU {
		return presetGPT2Config(c.Model, dtype), nil
	}
	if c.Model.HF == "" {
		return presetConfig(c.Model, dtype), nil
	}
	b, err := os.ReadFile(filepath.Join(c.Model.HF, hfConfigFile))
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(c.Model.HF, hfConfigFile), err)
	}
	delete(cfg, "_name_or_path")
	if _, ok := cfg["dtype"]; ok {
		cfg["dtype"] = dtype
	} else {
		cfg["torch_dtype"] = dtype
	}
	return cfg, nil
}

// presetConfig describes a model built from a preset the way
// transformers' LlamaConfig does.
func presetConfig(m modelConfig, dtype string) map[string]any {
	return map[string]any{
		"architectures": []string{presetArchitecture}, "model_type": "llama",
		"hidden_size": m.Hidden, "intermediate_size": m.FFNHidden, "num_hidden_layers": m.Layers,
		"num_attention_heads": m.Heads, "num_key_value_heads": m.KVHeads, "head_dim": m.Hidden / m.Heads,
		"vocab_size": m.Vocab, "max_position_embeddings": m.SeqLen, "hidden_act": "silu",
		"rms_norm_eps": m.NormEps, "rope_theta": m.RopeTheta, "rope_scaling": nil,
		"tie_word_embeddings": m.TiedEmbeddings, "attention_bias": false, "mlp_bias": false,
		"initializer_range": 0.02, "torch_dtype": dtype, "use_cache": true,
	}
}

// presetGPT2Config describes a GPT-2 built from a preset the way
// transformers' GPT2Config does; its position table has seq_len rows, and
// dropout is off, as the trainer trained it.
func presetGPT2Config(m modelConfig, dtype string) map[string]any {
	return map[string]any{
		"architectures": []string{gpt2Architecture}, "model_type": "gpt2",
		"n_embd": m.Hidden, "n_inner": m.FFNHidden, "n_layer": m.Layers, "n_head": m.Heads,
		"n_positions": m.SeqLen, "n_ctx": m.SeqLen, "vocab_size": m.Vocab, "activation_function": "gelu_new",
		"layer_norm_epsilon": m.NormEps, "tie_word_embeddings": m.TiedEmbeddings, "scale_attn_weights": true,
		"attn_pdrop": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0,
		"initializer_range": 0.02, "torch_dtype": dtype, "use_cache": true,
	}
}

// writeGenerationConfig copies the source folder's generation_config.json,
// or writes one with the special tokens config.json names.
func writeGenerationConfig(source, dir string, cfg map[string]any) error {
	if source != "" {
		err := copyFile(filepath.Join(source, generationFile), filepath.Join(dir, generationFile))
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	gen := map[string]any{"_from_model_config": true}
	for _, k := range []string{"bos_token_id", "eos_token_id", "pad_token_id"} {
		if v, ok := cfg[k]; ok && v != nil {
			gen[k] = v
		}
	}
	return writeJSON(filepath.Join(dir, generationFile), gen)
}

// copyTokenizer copies a tokenizer file, or the tokenizer files a folder
// has, into dir.
func copyTokenizer(from, dir string) error {
	if from == "" {
		return nil
	}
	st, err := os.Stat(from)
	if err != nil {
		return fmt.Errorf("the tokenizer: %w", err)
	}
	if !st.IsDir() {
		return copyFile(from, filepath.Join(dir, filepath.Base(from)))
	}
	for _, name := range tokenizerFiles {
		err := copyFile(filepath.Join(from, name), filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// finishPEFT writes adapter_config.json beside the adapters the trainer
// wrote under PEFT's names.
func finishPEFT(c runConfig, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, peftWeightsFile)); err != nil {
		return err
	}
	if c.LoRA == nil {
		return errors.New("the stage trains no adapters")
	}
	base := ""
	if c.BaseFormat == formatHF {
		base = c.Base
	}
	cfg := map[string]any{
		"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": c.LoRA.Rank, "lora_alpha": c.LoRA.Alpha,
		"lora_dropout": c.LoRA.Dropout, "target_modules": peftTargets(c.Model, c.LoRA.Targets),
		"base_model_name_or_path": base, "bias": "none", "fan_in_fan_out": false, "inference_mode": true,
		"init_lora_weights": true, "modules_to_save": nil, "use_rslora": false, "use_dora": false,
		"layers_to_transform": nil, "layers_pattern": nil, "rank_pattern": map[string]any{}, "alpha_pattern": map[string]any{},
	}
	if c.Model.Activation == activationGELU {
		gpt2PEFT(cfg, c.Model, *c.LoRA)
	}
	return writeJSON(filepath.Join(dir, peftConfigFile), cfg)
}

// gpt2Modules are GPT-2's names for the trainer's linear layers, each
// with its parent so that attn.c_proj and mlp.c_proj stay apart; q, k and
// v are the one Conv1D attn.c_attn.
var gpt2Modules = map[string]string{"q_proj": "attn.c_attn", "k_proj": "attn.c_attn", "v_proj": "attn.c_attn",
	"o_proj": "attn.c_proj", "up_proj": "mlp.c_fc", "down_proj": "mlp.c_proj"}

// gpt2PEFT sets a GPT-2 adapter's config: GPT-2's modules, whose weights
// are stored [in, out] (fan_in_fan_out), and for n > 1 of q, k and v
// adapted, c_attn's rank n*r and alpha n*alpha: the trainer writes their
// adapters as one of rank n*r (A's rows stacked, B block-diagonal), whose
// scaling must stay alpha / r.
func gpt2PEFT(cfg map[string]any, model modelConfig, l loraConfig) {
	set, fused := map[string]bool{}, 0
	for _, t := range peftTargets(model, l.Targets) {
		m := gpt2Modules[t] // countModel refused a target GPT-2 does not have
		set[m] = true
		if m == "attn.c_attn" {
			fused++
		}
	}
	cfg["target_modules"], cfg["fan_in_fan_out"] = slices.Sorted(maps.Keys(set)), true
	if fused > 1 {
		cfg["rank_pattern"] = map[string]any{"c_attn": fused * l.Rank}
		cfg["alpha_pattern"] = map[string]any{"c_attn": float64(fused) * l.Alpha}
	}
}

// peftTargets are the adapted modules under transformers' names, sorted,
// with all-linear spelled out as the model's linear layers.
func peftTargets(m modelConfig, targets []string) []string {
	set := map[string]bool{}
	for _, t := range counts.ExpandTargets(countShape(m), targets) {
		set[counts.TargetName(t)+"_proj"] = true
	}
	return slices.Sorted(maps.Keys(set))
}

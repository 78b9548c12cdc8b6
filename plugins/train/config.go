package train

import (
	"github.com/gpuflow/gpuflow/plugins/api"
)

// runConfig is what the trainer reads from config.json. Field names are the
// trainer's; units are SI.
type runConfig struct {
	Stage  string      `json:"stage"`
	Type   string      `json:"type"`
	Model  modelConfig `json:"model"`
	Layout api.Layout  `json:"layout"`
	// Data are Megatron shard prefixes (PREFIX.bin and PREFIX.idx).
	Data []string `json:"data"`
	// Masks are the loss masks beside the shards (PREFIX.mask), one per
	// Data prefix, or none: then every token is trained.
	Masks           []string `json:"masks,omitempty"`
	Steps           int64    `json:"steps"`
	LR              float64  `json:"lr"`
	MinLR           float64  `json:"min_lr"`
	Schedule        string   `json:"schedule"`
	WarmupSteps     int64    `json:"warmup_steps"`
	WeightDecay     float64  `json:"weight_decay"`
	Seed            int64    `json:"seed"`
	CheckpointEvery int64    `json:"checkpoint_every"`
	Checkpoint      bool     `json:"checkpoint"`
	CheckpointDir   string   `json:"checkpoint_dir"`
	KeepCheckpoints int      `json:"keep_checkpoints"`
	ResumeFrom      string   `json:"resume_from,omitempty"`
	Compile         bool     `json:"compile"`
	PeakFLOPS       float64  `json:"peak_flops"`
	// Params and AdapterParams count the model and its LoRA adapters, and
	// FLOPsPerToken is the work per token MFU is quoted in, all as the
	// estimator counts them (plugins/api/counts), so that a run's MFU and
	// its plan's are computed alike.
	Params        int64       `json:"params,omitempty"`
	AdapterParams int64       `json:"adapter_params,omitempty"`
	FLOPsPerToken float64     `json:"flops_per_token,omitempty"`
	LoRA          *loraConfig `json:"lora,omitempty"`
	// Base is the weights a run starts from: a finetune's base or a
	// pretrain's init, in BaseFormat (formatHF or formatCheckpoint).
	Base       string `json:"base,omitempty"`
	BaseFormat string `json:"base_format,omitempty"`
	Merge      bool   `json:"merge,omitempty"`
	// Device is deviceCUDA, or deviceCPU for ranks on CPU cores over gloo.
	Device string `json:"device"`
	// ExportHF and ExportPEFT are the folders to export to, absolute; the
	// trainer writes each into its .partial sibling and gpuflow finishes
	// it (export.go). ExportTokenizer is where tokenizer files come from.
	ExportHF        string `json:"export_hf,omitempty"`
	ExportPEFT      string `json:"export_peft,omitempty"`
	ExportTokenizer string `json:"export_tokenizer,omitempty"`
	// ValidData are the validation shard prefixes; none means no
	// validation. EvalEvery is the steps between validations (0: only at
	// the end), EvalBatches the global batches each one reads.
	ValidData   []string `json:"valid_data,omitempty"`
	EvalEvery   int64    `json:"eval_every,omitempty"`
	EvalBatches int64    `json:"eval_batches,omitempty"`
	// TensorBoardDir is where rank 0 writes TensorBoard event files.
	TensorBoardDir string `json:"tensorboard_dir,omitempty"`
}

// Devices a run may use.
const (
	deviceCUDA = "cuda"
	deviceCPU  = "cpu"
)

// modelConfig is the model's shape; its cty tags read it from the value of
// model.NAME.
type modelConfig struct {
	Layers         int    `json:"layers" cty:"layers"`
	Hidden         int    `json:"hidden" cty:"hidden"`
	FFNHidden      int    `json:"ffn_hidden" cty:"ffn_hidden"`
	Heads          int    `json:"heads" cty:"heads"`
	KVHeads        int    `json:"kv_heads" cty:"kv_heads"`
	Vocab          int    `json:"vocab" cty:"vocab"`
	SeqLen         int    `json:"seq_len" cty:"seq_len"`
	TiedEmbeddings bool   `json:"tied_embeddings" cty:"tied_embeddings"`
	Activation     string `json:"activation" cty:"activation"`
	// Window is the sliding-window span in tokens (0 for none) and
	// WindowLayers how many layers attend through it, as the engine read
	// them from the Hugging Face folder's config.json for the plan. Only
	// the counts use them; the trainer reads the window from the folder.
	Window       int `json:"-" cty:"sliding_window"`
	WindowLayers int `json:"-" cty:"window_layers"`
	// HF is the Hugging Face folder whose config.json gives what the shape
	// does not (rotary, norms, biases); empty for a model from a preset,
	// which is a Llama with RopeTheta and NormEps (a GPT-2 with NormEps
	// for activation "gelu").
	HF           string  `json:"hf,omitempty" cty:"from"`
	Architecture string  `json:"architecture" cty:"architecture"`
	RopeTheta    float64 `json:"rope_theta"`
	NormEps      float64 `json:"norm_eps"`
}

// A model from a preset is a Llama 3 style model: rotary base and RMSNorm
// epsilon as Llama 3's config.json has them. One with activation "gelu"
// is a GPT-2, whose LayerNorm epsilon is the same.
const (
	presetArchitecture = "LlamaForCausalLM"
	presetRopeTheta    = 500000.0
	presetNormEps      = 1e-5
	gpt2Architecture   = "GPT2LMHeadModel"
	activationGELU     = "gelu"
)

type loraConfig struct {
	Rank    int      `json:"rank" cty:"rank"`
	Alpha   float64  `json:"alpha" cty:"alpha"`
	Targets []string `json:"targets" cty:"targets"`
	Dropout float64  `json:"dropout" cty:"dropout"`
}

// hardwareConfig is the part of hardware.NAME the launcher needs.
type hardwareConfig struct {
	Name        string             `cty:"name"`
	Nodes       int                `cty:"nodes"`
	GPUsPerNode int                `cty:"gpus_per_node"`
	TFLOPS      map[string]float64 `cty:"tflops"`
	// Multicast is false where the profile sets nvlink_multicast = false.
	Multicast bool `cty:"nvlink_multicast"`
}

// Defaults of the optional arguments, as docs/training.md lists them.
const (
	defaultSchedule        = "cosine"
	defaultWeightDecay     = 0.1
	defaultSeed            = 1
	defaultKeepCheckpoints = 2
)

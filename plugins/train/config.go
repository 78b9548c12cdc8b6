package train

import (
	"fmt"
	"math"
	"math/big"

	"github.com/zclconf/go-cty/cty"

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
	Masks           []string    `json:"masks,omitempty"`
	Steps           int64       `json:"steps"`
	LR              float64     `json:"lr"`
	MinLR           float64     `json:"min_lr"`
	Schedule        string      `json:"schedule"`
	WarmupSteps     int64       `json:"warmup_steps"`
	WeightDecay     float64     `json:"weight_decay"`
	Seed            int64       `json:"seed"`
	CheckpointEvery int64       `json:"checkpoint_every"`
	Checkpoint      bool        `json:"checkpoint"`
	CheckpointDir   string      `json:"checkpoint_dir"`
	KeepCheckpoints int         `json:"keep_checkpoints"`
	ResumeFrom      string      `json:"resume_from,omitempty"`
	Compile         bool        `json:"compile"`
	PeakFLOPS       float64     `json:"peak_flops"`
	LoRA            *loraConfig `json:"lora,omitempty"`
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

type modelConfig struct {
	Layers         int    `json:"layers"`
	Hidden         int    `json:"hidden"`
	FFNHidden      int    `json:"ffn_hidden"`
	Heads          int    `json:"heads"`
	KVHeads        int    `json:"kv_heads"`
	Vocab          int    `json:"vocab"`
	SeqLen         int    `json:"seq_len"`
	TiedEmbeddings bool   `json:"tied_embeddings"`
	Activation     string `json:"activation"`
	// HF is the Hugging Face folder whose config.json gives what the shape
	// does not (rotary, norms, biases); empty for a model from a preset,
	// which is a Llama with RopeTheta and NormEps.
	HF           string  `json:"hf,omitempty"`
	Architecture string  `json:"architecture"`
	RopeTheta    float64 `json:"rope_theta"`
	NormEps      float64 `json:"norm_eps"`
}

// A model from a preset is a Llama 3 style model: rotary base and RMSNorm
// epsilon as Llama 3's config.json has them.
const (
	presetArchitecture = "LlamaForCausalLM"
	presetRopeTheta    = 500000.0
	presetNormEps      = 1e-5
)

type loraConfig struct {
	Rank    int      `json:"rank"`
	Alpha   float64  `json:"alpha"`
	Targets []string `json:"targets"`
	Dropout float64  `json:"dropout"`
}

// hardwareConfig is the part of hardware.NAME the launcher needs.
type hardwareConfig struct {
	Name        string
	Nodes       int
	GPUsPerNode int
	TFLOPS      map[string]float64
	// MulticastOff: the profile sets nvlink_multicast = false.
	MulticastOff bool
}

// Defaults of the optional arguments, as docs/training.md lists them.
const (
	defaultSchedule        = "cosine"
	defaultWeightDecay     = 0.1
	defaultSeed            = 1
	defaultKeepCheckpoints = 2
)

// decoder reads a stage body into typed values, collecting diagnostics
// against the attribute at fault.
type decoder struct {
	c     cty.Value
	diags api.Diagnostics
}

func (d *decoder) fail(path cty.Path, summary, detail string) {
	d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail, Path: path})
}

func (d *decoder) number(attr string, def float64) float64 {
	v := known(d.c, attr)
	if v.IsNull() || v.Type() != cty.Number {
		return def
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

func (d *decoder) str(attr, def string) string {
	v := known(d.c, attr)
	if v.IsNull() || v.Type() != cty.String {
		return def
	}
	return v.AsString()
}

func (d *decoder) boolean(attr string, def bool) bool {
	v := known(d.c, attr)
	if v.IsNull() || v.Type() != cty.Bool {
		return def
	}
	return v.True()
}

// object reads attr as an object or map value, reporting what it must be.
func (d *decoder) object(attr, want string) cty.Value {
	v := known(d.c, attr)
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		d.fail(cty.GetAttrPath(attr), "Invalid "+attr, fmt.Sprintf("%s must be %s.", attr, want))
		return cty.NilVal
	}
	return v
}

// field reads a whole number from an object value; missing reads as def.
func field(obj cty.Value, name string, def int) int {
	v := attrOf(obj, name)
	if v.IsNull() || v.Type() != cty.Number {
		return def
	}
	i, acc := v.AsBigFloat().Int64()
	if acc != big.Exact || i > math.MaxInt32 || i < math.MinInt32 {
		return def
	}
	return int(i)
}

func fieldString(obj cty.Value, name, def string) string {
	v := attrOf(obj, name)
	if v.IsNull() || v.Type() != cty.String {
		return def
	}
	return v.AsString()
}

func fieldBool(obj cty.Value, name string) bool {
	v := attrOf(obj, name)
	return !v.IsNull() && v.Type() == cty.Bool && v.True()
}

// attrOf reads name from an object or map value, null when absent.
func attrOf(obj cty.Value, name string) cty.Value {
	null := cty.NullVal(cty.DynamicPseudoType)
	switch {
	case obj == cty.NilVal || obj.IsNull() || !obj.IsKnown():
		return null
	case obj.Type().IsObjectType() && obj.Type().HasAttribute(name):
		v := obj.GetAttr(name)
		if v.IsKnown() {
			return v
		}
	case obj.Type().IsMapType() && obj.HasIndex(cty.StringVal(name)).True():
		v := obj.Index(cty.StringVal(name))
		if v.IsKnown() {
			return v
		}
	}
	return null
}

func (d *decoder) model() modelConfig {
	obj := d.object("model", "a model, e.g. model.small")
	return modelConfig{
		Layers: field(obj, "layers", 0), Hidden: field(obj, "hidden", 0), FFNHidden: field(obj, "ffn_hidden", 0),
		Heads: field(obj, "heads", 0), KVHeads: field(obj, "kv_heads", 0), Vocab: field(obj, "vocab", 0),
		SeqLen: field(obj, "seq_len", 0), TiedEmbeddings: fieldBool(obj, "tied_embeddings"),
		Activation: fieldString(obj, "activation", "swiglu"), Architecture: fieldString(obj, "architecture", presetArchitecture),
		HF: fieldString(obj, "from", ""), RopeTheta: presetRopeTheta, NormEps: presetNormEps,
	}
}

func (d *decoder) layout() api.Layout {
	obj := d.object("layout", "a layout, e.g. layout.data_parallel")
	return api.Layout{
		TP: field(obj, "tp", 1), PP: field(obj, "pp", 1), DP: field(obj, "dp", 1), CP: field(obj, "cp", 1),
		VP: field(obj, "vp", 1), ZeRO: field(obj, "zero", 0), FSDP: fieldBool(obj, "fsdp"),
		MicroBatch: field(obj, "micro_batch", 0), GlobalBatch: field(obj, "global_batch", 0),
		Recompute: fieldString(obj, "recompute", "none"), SequenceParallel: fieldBool(obj, "sequence_parallel"),
		Precision: fieldString(obj, "precision", "bf16"),
	}
}

func (d *decoder) hardware() hardwareConfig {
	obj := d.object("hardware", "a hardware block, e.g. hardware.lab")
	hw := hardwareConfig{Name: fieldString(obj, "name", ""), Nodes: field(obj, "nodes", 1),
		GPUsPerNode: field(obj, "gpus_per_node", 0), TFLOPS: map[string]float64{}}
	if m := attrOf(obj, "nvlink_multicast"); !m.IsNull() && m.Type() == cty.Bool {
		hw.MulticastOff = m.False()
	}
	if t := attrOf(obj, "tflops"); !t.IsNull() && (t.Type().IsMapType() || t.Type().IsObjectType()) {
		for k, v := range t.AsValueMap() {
			if v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
				hw.TFLOPS[k], _ = v.AsBigFloat().Float64()
			}
		}
	}
	return hw
}

func (d *decoder) lora() *loraConfig {
	l := known(d.c, "lora")
	if l.IsNull() {
		return nil
	}
	out := &loraConfig{Rank: field(l, "rank", 0), Dropout: 0}
	if v := attrOf(l, "alpha"); !v.IsNull() {
		out.Alpha, _ = v.AsBigFloat().Float64()
	}
	if v := attrOf(l, "dropout"); !v.IsNull() {
		out.Dropout, _ = v.AsBigFloat().Float64()
	}
	if t := attrOf(l, "targets"); !t.IsNull() && (t.Type().IsListType() || t.Type().IsTupleType()) {
		for _, e := range t.AsValueSlice() {
			if e.IsKnown() && !e.IsNull() && e.Type() == cty.String {
				out.Targets = append(out.Targets, e.AsString())
			}
		}
	}
	return out
}

// steps is the optimizer step budget: steps, or train_tokens rounded up
// to whole global batches.
func (d *decoder) steps(m modelConfig, l api.Layout) int64 {
	if s := d.number("steps", 0); s > 0 {
		return int64(math.Ceil(s))
	}
	tokens := d.number("train_tokens", 0)
	perStep := float64(l.GlobalBatch) * float64(m.SeqLen)
	if tokens <= 0 || perStep <= 0 {
		return 0
	}
	return int64(math.Ceil(tokens / perStep))
}

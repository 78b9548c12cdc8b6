package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// trainerTestdata holds config.json files for the trainer's own tests,
// written from runConfig here: the Python side loads them.
var trainerTestdata = filepath.Join("trainer", "tests", "testdata")

// trainerConfigs are the trainer tests' configs: the run of a tiny model
// they train (pretrain.json), a finetune of it with every field set
// (config.json), a tiny GPT-2's run and LoRA finetune (gpt2.json,
// gpt2_lora.json), and an evaluation of a Hugging Face folder on CPU ranks
// (eval.json), whose tests put their own files in. Counts are the
// plugin's own.
func trainerConfigs(t *testing.T) map[string]any {
	pretrain := runConfig{Stage: "pretrain.test", Type: "pretrain",
		Model: modelConfig{Layers: 2, Hidden: 128, FFNHidden: 256, Heads: 4, KVHeads: 2, Vocab: 512, SeqLen: 64, Activation: "swiglu",
			Architecture: presetArchitecture, RopeTheta: presetRopeTheta, NormEps: presetNormEps},
		Layout: api.Layout{TP: 1, PP: 1, DP: 1, CP: 1, VP: 1, MicroBatch: 4, GlobalBatch: 8, Recompute: "none", Precision: "bf16"},
		Data:   []string{"data"}, Steps: 6, LR: 3e-3, MinLR: 3e-4, Schedule: "cosine", WarmupSteps: 2, WeightDecay: 0.1, Seed: 1,
		CheckpointEvery: 3, Checkpoint: true, CheckpointDir: "ckpt", KeepCheckpoints: 2, PeakFLOPS: 989e12, Device: deviceCUDA}
	every := pretrain
	every.Stage, every.Type, every.ResumeFrom, every.Compile = "finetune.test", "finetune", "ckpt/step-00000003", true
	every.Model.TiedEmbeddings = true
	every.Model.HF = "model" // the trainer's folder; the counts read only the model value, here without a window
	on := true
	every.Layout.ZeRO, every.Layout.FSDP, every.Layout.SequenceParallel = 1, true, true
	every.Layout.Attention, every.Layout.ScatterGather, every.Layout.GradReduceDType, every.Layout.OverlapGradReduce = "flash", &on, "fp32", &on
	every.Layout.GradAccumFusion, every.Layout.AsyncTPAllReduce, every.Layout.ScatterGatherGrads = &on, &on, &on
	every.Layout.FirstStageLayers, every.Layout.LastStageLayers = 1, 1
	every.Masks = []string{"data.mask"}
	every.ValidData, every.EvalEvery, every.EvalBatches, every.TensorBoardDir = []string{"valid"}, 3, 2, "tensorboard"
	every.LoRA = &loraConfig{Rank: 8, Alpha: 16, Targets: []string{"q_proj", "v_proj"}, Dropout: 0.05}
	every.Base, every.BaseFormat, every.Merge = "base", formatCheckpoint, true
	every.ExportHF, every.ExportPEFT, every.ExportTokenizer = "export/hf", "export/peft", "tokenizer"
	gpt2 := pretrain
	gpt2.Stage = "pretrain.gpt2"
	gpt2.Model = modelConfig{Layers: 2, Hidden: 128, FFNHidden: 512, Heads: 4, KVHeads: 4, Vocab: 512, SeqLen: 64, TiedEmbeddings: true,
		Activation: activationGELU, Architecture: gpt2Architecture, RopeTheta: presetRopeTheta, NormEps: presetNormEps}
	gpt2LoRA := gpt2
	gpt2LoRA.Stage, gpt2LoRA.Type, gpt2LoRA.Base, gpt2LoRA.BaseFormat = "finetune.gpt2", "finetune", "base", formatCheckpoint
	gpt2LoRA.LoRA = &loraConfig{Rank: 4, Alpha: 8, Targets: []string{"all-linear"}}
	for _, c := range []*runConfig{&pretrain, &every, &gpt2, &gpt2LoRA} {
		if diags := countModel(c); diags.HasErrors() {
			t.Fatal(diags)
		}
	}
	return map[string]any{"pretrain.json": pretrain, "config.json": every, "gpt2.json": gpt2, "gpt2_lora.json": gpt2LoRA, "eval.json": evalConfig{Stage: "eval.test",
		Model: modelConfig{Layers: 2, Hidden: 64, FFNHidden: 128, Heads: 4, KVHeads: 2, Vocab: 128, SeqLen: 32, Activation: "swiglu",
			Architecture: presetArchitecture, RopeTheta: presetRopeTheta, NormEps: presetNormEps, HF: "model"},
		Layout: api.Layout{TP: 1, PP: 1, DP: 2, CP: 1, VP: 1, MicroBatch: 2, GlobalBatch: 4, Recompute: "none", Precision: "bf16"},
		Device: deviceCPU, Seed: 1, Weights: "model", WeightsFormat: formatHF, Data: []string{"valid"},
		Choices:  &choicesFiles{Questions: "questions.jsonl", Scores: "scores.jsonl"},
		Generate: &generateConfig{Prompts: "prompts.jsonl", Completions: "completions.jsonl", MaxNewTokens: 6, TopP: 1, Stop: []uint32{}}}}
}

// TestTrainerConfigFiles writes the trainer tests' configs (go test
// -update) or checks that they are current.
func TestTrainerConfigFiles(t *testing.T) {
	t.Parallel()
	for name, cfg := range trainerConfigs(t) {
		path := filepath.Join(trainerTestdata, name)
		if *update {
			if err := writeJSON(path, cfg); err != nil {
				t.Fatal(err)
			}
		}
		got, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(append(got, '\n'))); diff != "" {
			t.Errorf("%s is not current; run go test ./plugins/train -run TestTrainerConfigFiles -update (-file +now):\n%s", path, diff)
		}
	}
	if zero := zeroFields(reflect.ValueOf(trainerConfigs(t)["config.json"]), ""); len(zero) > 0 {
		t.Errorf("config.json leaves fields unset, so the trainer's tests do not read them: %s", strings.Join(zero, ", "))
	}
}

// zeroFields names the fields of a struct value, nested ones included,
// that hold their zero value; those config.json leaves out (json:"-")
// are not the trainer's to read.
func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("json") == "-" {
			continue
		}
		f, name := v.Field(i), prefix+v.Type().Field(i).Name
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			f = f.Elem()
		}
		switch {
		case f.IsZero():
			out = append(out, name)
		case f.Kind() == reflect.Struct:
			out = append(out, zeroFields(f, name+".")...)
		}
	}
	return out
}

// pyField is a dataclass field as trainer/config.py declares it, or as
// it must be declared to mirror a Go field.
type pyField struct {
	Name, Type string
	Default    bool
}

// pyClasses are the dataclasses of trainer/config.py and the Go types they
// mirror.
var pyClasses = map[string]reflect.Type{
	"RunConfig":      reflect.TypeFor[runConfig](),
	"ModelConfig":    reflect.TypeFor[modelConfig](),
	"Layout":         reflect.TypeFor[api.Layout](),
	"LoRAConfig":     reflect.TypeFor[loraConfig](),
	"EvalConfig":     reflect.TypeFor[evalConfig](),
	"ChoicesFiles":   reflect.TypeFor[choicesFiles](),
	"GenerateConfig": reflect.TypeFor[generateConfig](),
}

// TestTrainerConfigMirrorsGo holds trainer/config.py to the Go structs
// the plugin writes config.json from: the same fields, of matching types,
// with a default exactly where Go leaves the field out when empty.
func TestTrainerConfigMirrorsGo(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("trainer", "config.py"))
	if err != nil {
		t.Fatal(err)
	}
	declared := dataclasses(src)
	for class, goType := range pyClasses {
		byName := cmpopts.SortSlices(func(a, b pyField) bool { return a.Name < b.Name })
		if diff := cmp.Diff(goFields(goType), declared[class], byName); diff != "" {
			t.Errorf("trainer/config.py's %s does not mirror %s (-Go +Python):\n%s", class, goType, diff)
		}
		delete(declared, class)
	}
	for class := range declared {
		t.Errorf("trainer/config.py's %s mirrors no Go type; add it to pyClasses", class)
	}
}

var (
	classLine = regexp.MustCompile(`^class (\w+):`)
	fieldLine = regexp.MustCompile(`^    (\w+): ([^=]+?)( = .+)?$`)
)

// dataclasses reads the fields of each @dataclass in Python source laid
// out as trainer/config.py says: one field a line, indented four spaces.
func dataclasses(src []byte) map[string][]pyField {
	out := map[string][]pyField{}
	class, decorated := "", false
	for _, line := range strings.Split(string(src), "\n") {
		if m := classLine.FindStringSubmatch(line); m != nil {
			class = ""
			if decorated {
				class = m[1]
				out[class] = []pyField{}
			}
		}
		decorated = line == "@dataclass"
		if line != "" && !strings.HasPrefix(line, " ") && !classLine.MatchString(line) {
			class = ""
		}
		if m := fieldLine.FindStringSubmatch(line); m != nil && class != "" {
			out[class] = append(out[class], pyField{Name: m[1], Type: m[2], Default: m[3] != ""})
		}
	}
	return out
}

// goFields is what the dataclass mirroring t must declare.
func goFields(t reflect.Type) []pyField {
	var out []pyField
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, pyField{Name: name, Type: pyType(t.Field(i).Type), Default: opts == "omitempty"})
		}
	}
	return out
}

func pyType(t reflect.Type) string {
	for class, goType := range pyClasses {
		if t == goType {
			return class
		}
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint32:
		return "int"
	case reflect.Float64:
		return "float"
	case reflect.String:
		return "str"
	case reflect.Bool:
		return "bool"
	case reflect.Slice:
		return "list[" + pyType(t.Elem()) + "]"
	case reflect.Pointer:
		return "Optional[" + pyType(t.Elem()) + "]"
	}
	return fmt.Sprintf("(no Python type for %s)", t)
}

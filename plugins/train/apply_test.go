package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// applyStage runs a stage through a Provider whose Python is the fake.
func applyStage(t *testing.T, p Provider, req *api.ApplyRequest) (*api.ApplyResponse, *recorder) {
	t.Helper()
	rec := &recorder{}
	resp, err := p.ApplyStage(context.Background(), req, rec)
	if err != nil {
		t.Fatal(err)
	}
	return resp, rec
}

// readRunConfig reads the trainer's config.json that apply wrote into the
// stage's run folder.
func readRunConfig(t *testing.T, req *api.ApplyRequest) runConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(req.RunDir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got runConfig
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func summaries(diags api.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary)
	}
	return out
}

func TestApplyRunsTheTrainer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "data", "train-00000"))
	body := defaultBody(cty.StringVal("data/train-00000"))
	body.checkpointEvery = 2
	req := request(dir, "pretrain", "ok", body.value(), "run-1")
	// The engine gives run folders relative to the working directory.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if req.RunDir, err = filepath.Rel(wd, req.RunDir); err != nil {
		t.Fatal(err)
	}
	resp, rec := applyStage(t, New(Options{Python: fakePython(t)}), req)
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Severity != api.Warning {
		t.Fatalf("diagnostics = %v, want the pre-flight's NCCL warning only", resp.Diagnostics)
	}
	root := filepath.Join(dir, ".gpuflow", "runs", "pretrain.ok", "checkpoints")
	keys, _ := os.ReadDir(root)
	if len(keys) != 1 {
		t.Fatalf("checkpoint roots: %v", keys)
	}
	final := filepath.Join(root, keys[0].Name(), "step-00000005")
	want := map[string]cty.Value{
		"checkpoint": cty.StringVal(final), "checkpoint_dir": cty.StringVal(filepath.Dir(final)),
		"final_loss": cty.NumberFloatVal(5.5), "tokens_per_s": cty.NumberFloatVal(1000), "mfu": cty.NumberFloatVal(0.4),
		"peak_memory_bytes": cty.NumberIntVal(2048), "peak_memory_bytes_per_rank": cty.ListVal([]cty.Value{cty.NumberIntVal(2048), cty.NumberIntVal(1500)}),
		"peak_allocated_bytes": cty.NumberIntVal(1024), "steps": cty.NumberIntVal(5), "tokens": cty.NumberIntVal(4096),
		"resumed_from_step": cty.NumberIntVal(0), "hf": cty.StringVal(""), "peft": cty.StringVal(""),
	}
	if diff := cmp.Diff(want, resp.Outputs, ctyCmp); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	var steps, losses, artifacts int
	for _, e := range rec.snapshot() {
		switch {
		case e.Progress != nil:
			steps++
		case e.Metric != nil && e.Metric.Name == "loss":
			losses++
		case e.Artifact != nil:
			artifacts++
		}
	}
	// checkpoints at steps 2, 4 and 5, then stdout.log and stderr.log
	if steps != 5 || losses != 5 || artifacts != 5 {
		t.Errorf("%d progress, %d loss metrics, %d artifacts; want 5, 5, 5", steps, losses, artifacts)
	}
	for _, f := range []string{"config.json", "stdout.log", "stderr.log", "trainer/train.py", "trainer/preflight.py", "trainer/model.py"} {
		if _, err := os.Stat(filepath.Join(req.RunDir, f)); err != nil {
			t.Errorf("run folder lacks %s: %v", f, err)
		}
	}
}

// TestApplyReportsLossScaling: an fp16 run's loss scale and skipped steps
// are metrics of every step and outputs of the stage; a skipped step whose
// loss overflowed has no loss metric.
func TestApplyReportsLossScaling(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "data", "train-00000"))
	body := defaultBody(cty.StringVal("data/train-00000"))
	body.precision = "fp16"
	resp, rec := applyStage(t, New(Options{Python: fakePython(t)}), request(dir, "pretrain", "ok", body.value(), "run-1"))
	if resp.Diagnostics.HasErrors() {
		t.Fatalf("diagnostics = %v", resp.Diagnostics)
	}
	got := map[string]cty.Value{"loss_scale": resp.Outputs["loss_scale"], "skipped_steps": resp.Outputs["skipped_steps"]}
	want := map[string]cty.Value{"loss_scale": cty.NumberFloatVal(32768), "skipped_steps": cty.NumberIntVal(1)}
	if diff := cmp.Diff(want, got, ctyCmp); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	metrics := map[string][]float64{}
	for _, e := range rec.snapshot() {
		if e.Metric != nil && (e.Metric.Name == "loss" || e.Metric.Name == "loss_scale" || e.Metric.Name == "skipped_steps") {
			metrics[e.Metric.Name] = append(metrics[e.Metric.Name], e.Metric.Value)
		}
	}
	wantMetrics := map[string][]float64{"loss": {9.5, 7.5, 6.5, 5.5}, "loss_scale": {65536, 65536, 32768, 32768, 32768},
		"skipped_steps": {0, 1, 1, 1, 1}}
	if diff := cmp.Diff(wantMetrics, metrics); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

var ctyCmp = cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })

func TestApplyWritesTheTrainersConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "data", "train-00000"))
	body := defaultBody(cty.StringVal("data/train-00000"))
	body.precision, body.recom = "fp8", "selective"
	req := request(dir, "pretrain", "ok", body.value(), "run-1")
	applyStage(t, New(Options{Python: fakePython(t)}), req)
	got := readRunConfig(t, req)
	want := runConfig{
		Stage: "pretrain.ok", Type: "pretrain",
		Model: modelConfig{Layers: 4, Hidden: 256, FFNHidden: 768, Heads: 4, KVHeads: 2, Vocab: 1024, SeqLen: 128, Activation: "swiglu",
			Architecture: "LlamaForCausalLM", RopeTheta: 500000, NormEps: 1e-5},
		Layout: api.Layout{TP: 1, PP: 1, DP: 2, CP: 1, VP: 1, MicroBatch: 2, GlobalBatch: 8, Recompute: "selective", Precision: "fp8"},
		Data:   []string{filepath.Join(dir, "data", "train-00000")}, Steps: 5, LR: 1e-3, MinLR: 1e-4, Schedule: "cosine",
		WarmupSteps: 1, WeightDecay: 0.1, Seed: 7, Checkpoint: true, KeepCheckpoints: 2, Compile: true, PeakFLOPS: 1979e12,
		Device: "cuda", EvalBatches: 8, TensorBoardDir: filepath.Join(req.RunDir, "tensorboard"),
		// 4 layers of 786,944 (attention 196,608, MLP 589,824, norms
		// 512), embedding and output 262,144 each, final norm 256; 6N
		// plus attention 12*4*256*128.
		Params: 3_672_320, FLOPsPerToken: 6*3_672_320 + 1_572_864,
	}
	want.CheckpointDir = filepath.Join(filepath.Dir(req.RunDir), "checkpoints", checkpointKey(want))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config.json (-want +got):\n%s", diff)
	}
}

// TestApplyPassesLossMasks: the loss masks beside a data_prep stage's chat
// shards go to the trainer with the shards, in their order, under every
// layout (the trainer applies them under tensor and pipeline parallelism
// too).
func TestApplyPassesLossMasks(t *testing.T) {
	t.Parallel()
	tests := map[string]func(b *stageBody){
		"data parallelism":    nil,
		"tensor parallelism":  func(b *stageBody) { b.tp, b.dp = 2, 1 },
		"a pipeline":          func(b *stageBody) { b.pp, b.dp = 2, 1 },
		"tensor and pipeline": func(b *stageBody) { b.tp, b.pp, b.dp = 2, 2, 1 },
	}
	for name, layout := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, p := range []string{"train_00000", "train_00000.mask", "train_00001", "train_00001.mask"} {
				writeShard(t, filepath.Join(dir, "chat", p))
			}
			body := defaultBody(cty.StringVal("chat"))
			if layout != nil {
				layout(&body)
			}
			req := request(dir, "pretrain", "ok", body.value(), "run-1")
			resp, _ := applyStage(t, New(Options{Python: fakePython(t)}), req)
			for _, d := range resp.Diagnostics {
				if d.Severity == api.Error {
					t.Fatalf("refused: %s: %s", d.Summary, d.Detail)
				}
			}
			got := readRunConfig(t, req)
			abs := func(p string) string { return filepath.Join(dir, "chat", p) }
			want := runConfig{Data: []string{abs("train_00000"), abs("train_00001")}, Masks: []string{abs("train_00000.mask"), abs("train_00001.mask")},
				Layout: api.Layout{TP: body.tp, PP: body.pp, DP: body.dp}}
			if diff := cmp.Diff(want, runConfig{Data: got.Data, Masks: got.Masks, Layout: api.Layout{TP: got.Layout.TP, PP: got.Layout.PP, DP: got.Layout.DP}}); diff != "" {
				t.Errorf("data, masks and layout (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyCompilesUnlessEager: framework = "gpuflow-eager" plans the
// trainer without torch.compile, so it runs it that way too.
func TestApplyCompilesUnlessEager(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		framework cty.Value
		compile   bool
	}{
		"default":       {cty.NullVal(cty.String), true},
		"gpuflow":       {cty.StringVal("gpuflow"), true},
		"gpuflow-eager": {cty.StringVal("gpuflow-eager"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeShard(t, filepath.Join(dir, "data", "train-00000"))
			body := defaultBody(cty.StringVal("data/train-00000"))
			body.extraAttrs = map[string]cty.Value{"framework": tc.framework}
			req := request(dir, "pretrain", "ok", body.value(), "run-1")
			applyStage(t, New(Options{Python: fakePython(t)}), req)
			got := readRunConfig(t, req)
			if got.Compile != tc.compile {
				t.Errorf("compile = %v, want %v", got.Compile, tc.compile)
			}
		})
	}
}

// TestOtherFrameworksPlanOnly: a stage planned as another framework would
// run it is a warning at validation and refused at apply, at the
// framework attribute, since apply runs gpuflow's trainer.
func TestOtherFrameworksPlanOnly(t *testing.T) {
	t.Parallel()
	for _, framework := range []string{"fsdp2", "megatron", "pytorch-eager"} {
		t.Run(framework, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeShard(t, filepath.Join(dir, "data", "train-00000"))
			body := defaultBody(cty.StringVal("data/train-00000"))
			body.extraAttrs = map[string]cty.Value{"framework": cty.StringVal(framework)}
			want := api.Diagnostics{plannedOnly(framework, api.Warning)}
			if diff := cmp.Diff(want, validate("pretrain", body.value()), cmp.Comparer(pathsEqual)); diff != "" {
				t.Errorf("validate (-want +got):\n%s", diff)
			}
			resp, rec := applyStage(t, New(Options{Python: fakePython(t)}), request(dir, "pretrain", "ok", body.value(), "run-1"))
			want = api.Diagnostics{plannedOnly(framework, api.Error)}
			if diff := cmp.Diff(want, resp.Diagnostics, cmp.Comparer(pathsEqual)); diff != "" {
				t.Errorf("apply (-want +got):\n%s", diff)
			}
			if len(rec.events) != 0 || resp.Outputs != nil {
				t.Errorf("a refused stage ran: %d events, outputs %v", len(rec.events), resp.Outputs)
			}
		})
	}
}

func pathsEqual(a, b cty.Path) bool { return a.Equals(b) }

func TestApplyResumesFromTheLatestCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "data", "train-00000"))
	body := defaultBody(cty.StringVal("data/train-00000"))
	body.steps, body.checkpointEvery = 6, 2
	p := New(Options{Python: fakePython(t)})
	first, _ := applyStage(t, p, request(dir, "pretrain", "flaky", body.value(), "run-1"))
	if diff := cmp.Diff([]string{"NCCL patch levels differ", "Training failed"}, summaries(first.Diagnostics)); diff != "" {
		t.Fatalf("first run (-want +got):\n%s", diff)
	}
	if !strings.Contains(first.Diagnostics[1].Detail, "killed") || !strings.Contains(first.Diagnostics[1].Detail, "status 137") {
		t.Errorf("failure detail lacks the stderr tail or the status: %s", first.Diagnostics[1].Detail)
	}
	second, rec := applyStage(t, p, request(dir, "pretrain", "flaky", body.value(), "run-2"))
	if second.Outputs == nil {
		t.Fatalf("second run did not finish: %v", second.Diagnostics)
	}
	if got := second.Outputs["resumed_from_step"]; !got.RawEquals(cty.NumberIntVal(2)) {
		t.Errorf("resumed_from_step = %v, want 2", got.GoString())
	}
	var resumed bool
	for _, e := range rec.snapshot() {
		resumed = resumed || (e.Log != nil && strings.HasPrefix(e.Log.Message, "resuming from ") && strings.HasSuffix(e.Log.Message, "step-00000002"))
	}
	if !resumed {
		t.Error("no log line says which checkpoint the run resumes from")
	}
}

func TestApplyStopCheckpointsAndReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "data", "train-00000"))
	p := New(Options{Python: fakePython(t), StopGrace: 10 * time.Second})
	rec := &recorder{}
	done := make(chan *api.ApplyResponse, 1)
	go func() {
		resp, _ := p.ApplyStage(context.Background(), request(dir, "pretrain", "hang", defaultBody(cty.StringVal("data/train-00000")).value(), "run-1"), rec)
		done <- resp
	}()
	waitFor(t, func() bool {
		for _, e := range rec.snapshot() {
			if e.Progress != nil && e.Progress.Done >= 3 {
				return true
			}
		}
		return false
	})
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp := <-done
	d := resp.Diagnostics[len(resp.Diagnostics)-1]
	if d.Summary != "Training stopped" || !strings.Contains(d.Detail, "was stopped at step") || !strings.Contains(d.Detail, "the next apply resumes from it") {
		t.Errorf("last diagnostic = %s: %s", d.Summary, d.Detail)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestApplyFailsClearly(t *testing.T) {
	t.Parallel()
	data := cty.StringVal("data/train-00000")
	tests := map[string]struct {
		name    string
		body    func(b *stageBody)
		python  string
		want    []string
		wantIn  string
		wantKey string
	}{
		"the trainer's own error": {name: "error", want: []string{"NCCL patch levels differ", "Training data unreadable"}, wantIn: "MMIDIDX"},
		"a crash quotes stderr":   {name: "crash", want: []string{"NCCL patch levels differ", "Training failed"}, wantIn: "illegal memory access"},
		"no python":               {name: "ok", python: "/nonexistent/python3", want: []string{"Python not found"}, wantIn: "GPUFLOW_PYTHON"},
		"more GPUs than the machine has": {name: "ok", body: func(b *stageBody) { b.dp, b.gpusPerNode, b.global = 16, 16, 32 },
			want: []string{"Not enough GPUs"}},
		"several nodes": {name: "ok", body: func(b *stageBody) { b.dp, b.global = 8, 16 },
			want: []string{"Multi-node training needs a cluster executor"}, wantIn: "2 nodes"},
		"context parallelism": {name: "ok", body: func(b *stageBody) { b.cp = 2 }, want: []string{"Trainer rule cp-needs-gpus: Context parallelism not supported by the trainer"}},
		"fp8 with LoRA reaches the base model's check": {name: "ok", body: func(b *stageBody) {
			b.precision = "fp8"
			b.lora = cty.ObjectVal(map[string]cty.Value{"rank": n(8), "alpha": n(16), "targets": cty.ListVal([]cty.Value{cty.StringVal("q_proj")}), "dropout": cty.NullVal(cty.Number)})
		}, want: []string{"No base model"}},
		"too few micro-batches for the pipeline": {name: "ok", body: func(b *stageBody) { b.pp, b.dp, b.global = 4, 1, 4 },
			want: []string{"Trainer rule pipeline-microbatches: Too few micro-batches for the pipeline"}},
		"missing data": {name: "ok", body: func(b *stageBody) { b.data = cty.StringVal("data/nothing") },
			want: []string{"Training data not found"}, wantKey: "data"},
		"loss masks on some shards": {name: "ok", body: func(b *stageBody) {
			b.data = cty.ListVal([]cty.Value{cty.StringVal("data/chat-00000"), cty.StringVal("data/train-00000")})
		}, want: []string{"Loss masks incomplete"}, wantIn: "has none", wantKey: "data"},
		"finetune without a base model": {name: "ok", body: func(b *stageBody) {
			b.lora = cty.ObjectVal(map[string]cty.Value{"rank": n(8), "alpha": n(16), "targets": cty.ListVal([]cty.Value{cty.StringVal("q_proj")}), "dropout": cty.NullVal(cty.Number)})
			b.base = cty.StringVal("ckpt/step-00000010")
		}, want: []string{"Not a model folder"}, wantKey: "base"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := defaultBody(data)
			if tc.body != nil {
				tc.body(&b)
			}
			python := tc.python
			if python == "" {
				python = fakePython(t)
			}
			stageType := "pretrain"
			if !b.lora.IsNull() {
				stageType = "finetune"
			}
			dir := t.TempDir()
			for _, p := range []string{"train-00000", "chat-00000", "chat-00000.mask"} {
				writeShard(t, filepath.Join(dir, "data", p))
			}
			resp, _ := applyStage(t, New(Options{Python: python}), request(dir, stageType, tc.name, b.value(), "run-1"))
			if resp.Outputs != nil {
				t.Errorf("a failed stage has outputs: %v", resp.Outputs)
			}
			if diff := cmp.Diff(tc.want, summaries(resp.Diagnostics)); diff != "" {
				t.Fatalf("diagnostics (-want +got):\n%s", diff)
			}
			last := resp.Diagnostics[len(resp.Diagnostics)-1]
			if !strings.Contains(last.Detail, tc.wantIn) {
				t.Errorf("detail %q lacks %q", last.Detail, tc.wantIn)
			}
			if tc.wantKey != "" && (len(last.Path) == 0 || last.Path[0] != cty.GetAttrStep{Name: tc.wantKey}) {
				t.Errorf("diagnostic points at %#v, want %s", last.Path, tc.wantKey)
			}
		})
	}
}

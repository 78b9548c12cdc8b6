package train

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// stageBody is a pretrain stage body as the engine decodes it: model,
// layout and hardware as the objects model.NAME, layout.NAME and
// hardware.NAME evaluate to.
type stageBody struct {
	hardware         string
	gpusPerNode      int
	tp, pp, dp, cp   int
	micro, global    int
	tied             bool
	activation       string
	data             cty.Value
	steps            int
	checkpointEvery  int
	lr               float64
	lora             cty.Value
	base             cty.Value
	from             string // the model's Hugging Face folder, if any
	extraAttrs       map[string]cty.Value
	multicastOff     bool
	layers, kvHeads  int
	window, windowed int // the sliding window's span and the layers it applies to
	precision, recom string
}

func defaultBody(data cty.Value) stageBody {
	return stageBody{hardware: "h200-x4", gpusPerNode: 4, tp: 1, pp: 1, dp: 2, cp: 1, micro: 2, global: 8,
		activation: "swiglu", data: data, steps: 5, lr: 1e-3, layers: 4, kvHeads: 2, precision: "bf16", recom: "none",
		lora: cty.NullVal(cty.DynamicPseudoType), base: cty.NullVal(cty.DynamicPseudoType)}
}

func n(i int) cty.Value { return cty.NumberIntVal(int64(i)) }

// optional is s, or a null string when s is empty.
func optional(s string) cty.Value {
	if s == "" {
		return cty.NullVal(cty.String)
	}
	return cty.StringVal(s)
}

func (b stageBody) value() cty.Value {
	attrs := map[string]cty.Value{
		"hardware": cty.ObjectVal(map[string]cty.Value{
			"name": cty.StringVal(b.hardware), "nodes": n(1), "gpus_per_node": n(b.gpusPerNode), "total_gpus": n(b.gpusPerNode),
			"nvlink_multicast": cty.BoolVal(!b.multicastOff),
			"tflops":           cty.MapVal(map[string]cty.Value{"bf16": cty.NumberFloatVal(989), "fp8": cty.NumberFloatVal(1979)}),
		}),
		"model": cty.ObjectVal(map[string]cty.Value{
			"name": cty.StringVal("small"), "layers": n(b.layers), "hidden": n(256), "ffn_hidden": n(768), "heads": n(4),
			"kv_heads": n(b.kvHeads), "vocab": n(1024), "seq_len": n(128), "tied_embeddings": cty.BoolVal(b.tied),
			"activation": cty.StringVal(b.activation), "from": optional(b.from),
			"sliding_window": n(b.window), "window_layers": n(b.windowed),
		}),
		"layout": cty.ObjectVal(map[string]cty.Value{
			"name": cty.StringVal("l"), "tp": n(b.tp), "pp": n(b.pp), "dp": n(b.dp), "cp": n(b.cp), "vp": n(1), "zero": n(0),
			"fsdp": cty.False, "micro_batch": n(b.micro), "global_batch": n(b.global), "recompute": cty.StringVal(b.recom),
			"sequence_parallel": cty.False, "precision": cty.StringVal(b.precision),
			"world_size": n(b.tp * b.pp * b.dp * b.cp), "grad_accumulation": n(b.global / (b.micro * b.dp)),
		}),
		"data":             b.data,
		"steps":            n(b.steps),
		"train_tokens":     cty.NullVal(cty.Number),
		"lr":               cty.NumberFloatVal(b.lr),
		"min_lr":           cty.NullVal(cty.Number),
		"schedule":         cty.NullVal(cty.String),
		"warmup_steps":     n(1),
		"weight_decay":     cty.NullVal(cty.Number),
		"seed":             n(7),
		"checkpoint_every": cty.NullVal(cty.Number),
		"framework":        cty.StringVal("gpuflow"),
		"global_batch":     cty.NullVal(cty.Number),
	}
	if b.checkpointEvery > 0 {
		attrs["checkpoint_every"] = n(b.checkpointEvery)
	}
	if !b.lora.IsNull() {
		attrs["lora"], attrs["base"], attrs["merge"] = b.lora, b.base, cty.False
	}
	for k, v := range b.extraAttrs {
		attrs[k] = v
	}
	return cty.ObjectVal(attrs)
}

// writeShard makes PREFIX.bin and PREFIX.idx (their contents do not matter
// to the Go side, which only finds them).
func writeShard(t *testing.T, prefix string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".bin", ".idx"} {
		if err := os.WriteFile(prefix+ext, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// request is an apply request for stage pretrain.NAME with its own run
// folder under dir, as the engine lays runs out.
func request(dir, stageType, name string, body cty.Value, run string) *api.ApplyRequest {
	return &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: stageType, Name: name, Config: body, WorkDir: dir,
			Env: map[string]string{"NCCL_P2P_LEVEL": "NVL"}},
		RunDir: filepath.Join(dir, ".gpuflow", "runs", stageType+"."+name, run),
	}
}

// recorder is an EventSink that keeps what it is sent.
type recorder struct {
	mu     sync.Mutex
	events []api.Event
}

func (r *recorder) Send(e api.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) snapshot() []api.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]api.Event(nil), r.events...)
}

func fakePython(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fakepython"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

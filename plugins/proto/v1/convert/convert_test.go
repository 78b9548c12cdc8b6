package convert

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

func TestValueRoundTrip(t *testing.T) {
	t.Parallel()
	tests := map[string]cty.Value{
		"string":        cty.StringVal("hi"),
		"number":        cty.NumberFloatVal(1.5e9),
		"bool":          cty.True,
		"null typed":    cty.NullVal(cty.List(cty.String)),
		"list":          cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")}),
		"map":           cty.MapVal(map[string]cty.Value{"k": cty.NumberIntVal(3)}),
		"set":           cty.SetVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2)}),
		"nested object": cty.ObjectVal(map[string]cty.Value{"t": cty.TupleVal([]cty.Value{cty.True, cty.StringVal("x")}), "n": cty.NullVal(cty.Number)}),
		"unknown":       cty.UnknownVal(cty.String),
		"partly unknown": cty.ObjectVal(map[string]cty.Value{
			"known": cty.StringVal("k"), "later": cty.UnknownVal(cty.List(cty.Number)),
		}),
		"dynamic": cty.DynamicVal,
		"nil":     cty.NilVal,
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dv, err := ValueToProto(v)
			if err != nil {
				t.Fatal(err)
			}
			if v.IsWhollyKnown() != (dv.GetMsgpack() == nil) {
				t.Errorf("known=%v but msgpack set=%v", v.IsWhollyKnown(), dv.GetMsgpack() != nil)
			}
			got, err := ValueFromProto(dv)
			if err != nil {
				t.Fatal(err)
			}
			if !got.RawEquals(v) {
				t.Errorf("round trip gave %#v, want %#v", got, v)
			}
		})
	}
}

func TestValueDropsMarks(t *testing.T) {
	t.Parallel()
	dv, err := ValueToProto(cty.StringVal("secret").Mark("sensitive"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ValueFromProto(dv)
	if err != nil || !got.RawEquals(cty.StringVal("secret")) {
		t.Errorf("got %#v, %v", got, err)
	}
}

func TestValueFromProtoRejectsGarbage(t *testing.T) {
	t.Parallel()
	dv, _ := ValueToProto(cty.StringVal("x"))
	dv.Json = []byte(`{"not": "a string"}`)
	if _, err := ValueFromProto(dv); err == nil {
		t.Error("decoded an object as a string")
	}
}

func TestDiagnosticsRoundTrip(t *testing.T) {
	t.Parallel()
	diags := api.Diagnostics{
		{Severity: api.Error, Summary: "s", Detail: "d", Path: cty.GetAttrPath("env").IndexString("K")},
		{Severity: api.Warning, Summary: "w", Path: cty.GetAttrPath("check").IndexInt(2).GetAttr("min")},
		{Severity: api.Error, Summary: "whole stage"},
	}
	got := DiagnosticsFromProto(DiagnosticsToProto(diags))
	if diff := cmp.Diff(diags, got, cmp.Comparer(pathsEqual)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func pathsEqual(a, b cty.Path) bool { return a.Equals(b) }

func TestPathStopsAtUnaddressableKey(t *testing.T) {
	t.Parallel()
	path := cty.GetAttrPath("a").Index(cty.NumberFloatVal(0.5)).GetAttr("b")
	got := PathFromProto(PathToProto(path))
	if !got.Equals(cty.GetAttrPath("a")) {
		t.Errorf("got %#v", got)
	}
}

func TestSchemaRoundTrip(t *testing.T) {
	t.Parallel()
	schema := &api.Schema{
		Name: "p", Version: "1.2.3", Capabilities: []string{api.CapabilityStop},
		StageTypes: map[string]*api.BlockSchema{
			"t": {
				Description: "a stage",
				Attributes: map[string]*api.Attribute{
					"command": {Type: cty.List(cty.String), Required: true, Description: "argv"},
					"token":   {Type: cty.String, Sensitive: true},
					"any":     {Type: cty.DynamicPseudoType},
				},
				Blocks: map[string]*api.NestedBlock{
					"check": {Nesting: api.NestingList, MinItems: 1, MaxItems: 3, Block: api.BlockSchema{
						Attributes: map[string]*api.Attribute{"min": {Type: cty.Number}},
					}},
					"one": {Nesting: api.NestingSingle},
				},
			},
		},
		Contracts: map[string]*api.StageContract{
			"t": {MetaArguments: []api.MetaArgument{{Name: api.MetaHardware, Required: true}, {Name: api.MetaLayout}},
				Estimate: &api.EstimateInputs{Work: api.WorkTrain, TrainTokens: "tokens", Steps: "steps", Framework: "framework",
					LoRA: "lora", GlobalBatch: "global_batch", CheckpointEvery: "checkpoint_every",
					EvalEvery: "eval_every", EvalBatches: "eval_batches", ValidData: "valid_data", DefaultEvalBatches: 8},
				Weights: []string{"base", "init"}, Files: []string{"questions", "generate.prompts"}},
			"u": {},
		},
	}
	ps, err := SchemaToProto(schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SchemaFromProto(ps)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(schema, got, cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestEventsRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Unix(1700000000, 123)
	tests := map[string]api.Event{
		"log":      {Time: at, Log: &api.Log{Level: "info", Message: "m"}},
		"progress": {Time: at, Progress: &api.Progress{Label: "l", Done: 1, Total: 4, Unit: "steps"}},
		"metric":   {Time: at, Metric: &api.Metric{Name: "loss", Value: 0.5, Unit: "", Step: 7}},
		"artifact": {Time: at, Artifact: &api.Artifact{Name: "a", Path: "/p", Bytes: 9}},
		"folder":   {Time: at, Artifact: &api.Artifact{Name: "ckpt", Path: "/c", Bytes: 90, Files: 3}},
	}
	for name, ev := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := EventFromProto(EventToProto(ev))
			if !ok {
				t.Fatal("not an event")
			}
			if diff := cmp.Diff(ev, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultIsNotAnEvent(t *testing.T) {
	t.Parallel()
	msg, err := ResultToProto(&api.ApplyResponse{Outputs: map[string]cty.Value{"n": cty.NumberIntVal(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := EventFromProto(msg); ok {
		t.Error("a Result decoded as an event")
	}
	res, err := ResultFromProto(msg.GetResult())
	if err != nil || !res.Outputs["n"].RawEquals(cty.NumberIntVal(1)) {
		t.Errorf("got %#v, %v", res, err)
	}
}

func TestPlanRoundTrip(t *testing.T) {
	t.Parallel()
	plan := &api.PlanResponse{
		Details:          []api.Detail{{Key: "command", Value: "true"}},
		Claims:           api.Claims{Nodes: 2, GPUsPerNode: 8},
		ExpectedDuration: 90 * time.Second,
		Diagnostics:      api.Diagnostics{{Severity: api.Warning, Summary: "w"}},
	}
	got := PlanFromProto(PlanToProto(plan))
	if diff := cmp.Diff(plan, got, cmp.Comparer(pathsEqual)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestStageRequestRoundTrip(t *testing.T) {
	t.Parallel()
	req := &api.ApplyRequest{
		StageRequest: api.StageRequest{
			Type: "exec", Name: "x", WorkDir: "/w", Env: map[string]string{"A": "1"},
			Config: cty.ObjectVal(map[string]cty.Value{"command": cty.ListVal([]cty.Value{cty.StringVal("true")})}),
		},
		RunDir: "/r",
	}
	pr, err := ApplyRequestToProto(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplyRequestFromProto(pr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, got, cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

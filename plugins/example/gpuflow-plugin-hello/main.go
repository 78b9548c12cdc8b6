// Command gpuflow-plugin-hello is a complete, small gpuflow plugin, the
// example docs/plugins.md walks through. Its stage type "hello" writes a
// greeting to a file in the stage's run directory and outputs the file's
// path:
//
//	stage "hello" "world" {
//	  name     = "world"
//	  greeting = "Hello"         # optional
//	  file     = "greeting.txt"  # optional, inside the run directory
//	}
//
// Its stage type "hello_train" shows how a stage gets gpuflow's estimate of
// memory, time and cost: it takes the engine's hardware, model and layout
// meta-arguments and says, in its contract, which of its arguments holds
// the token budget. Applying it writes what it would train to a file:
//
//	stage "hello_train" "tiny" {
//	  hardware = hardware.lab
//	  model    = model.tiny
//	  layout   = layout.one
//	  tokens   = 1e9
//	}
//
// Install it by putting the built executable on $GPUFLOW_PLUGIN_PATH, in
// .gpuflow/plugins, beside gpuflow or on $PATH.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

func main() {
	sdk.Serve(hello{})
}

// hello implements api.Provider. Its applies finish at once, so it has
// nothing to stop and declares no capabilities.
type hello struct{}

func (hello) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{
		Name:    "hello",
		Version: "1.0.0",
		StageTypes: map[string]*api.BlockSchema{
			"hello": {
				Description: "Writes a greeting to a file.",
				Attributes: map[string]*api.Attribute{
					"name":     {Type: cty.String, Required: true, Description: "Who to greet."},
					"greeting": {Type: cty.String, Description: `The greeting; default "Hello".`},
					"file":     {Type: cty.String, Description: `File name in the run directory; default "greeting.txt".`},
				},
			},
			"hello_train": {
				Description: "Writes what a training run of the model would do to a file.",
				Attributes: map[string]*api.Attribute{
					"tokens": {Type: cty.Number, Required: true, Description: "Tokens to train on."},
				},
			},
		},
		Contracts: map[string]*api.StageContract{"hello_train": {
			MetaArguments: []api.MetaArgument{{Name: api.MetaHardware, Required: true},
				{Name: api.MetaModel, Required: true}, {Name: api.MetaLayout, Required: true}},
			Estimate: &api.EstimateInputs{Work: api.WorkTrain, TrainTokens: "tokens"},
		}},
	}, nil
}

// config is a hello stage body, over the defaults of what it leaves out.
type config struct {
	Name     string `cty:"name"`
	Greeting string `cty:"greeting"`
	File     string `cty:"file"`
	// Unknown lists what is known only at apply time (at plan time, a value
	// from another stage's outputs); it is not checked.
	Unknown sdk.Unknowns
}

// decode reads the body and says what is wrong with it.
func decode(body cty.Value) (config, api.Diagnostics) {
	cfg := config{Greeting: "Hello", File: "greeting.txt"}
	diags := sdk.Decode(body, &cfg)
	if cfg.Name == "" && !cfg.Unknown.Attr("name") {
		diags = append(diags, api.Diagnostic{
			Severity: api.Error,
			Summary:  "Empty name",
			Detail:   "A greeting needs someone to greet: give name a value.",
			Path:     cty.GetAttrPath("name"),
		})
	}
	if !filepath.IsLocal(cfg.File) {
		diags = append(diags, api.Diagnostic{
			Severity: api.Error,
			Summary:  "File outside the run directory",
			Detail:   fmt.Sprintf("%q must be a relative path that stays inside the stage's run directory.", cfg.File),
			Path:     cty.GetAttrPath("file"),
		})
	}
	return cfg, diags
}

func (hello) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	if req.Type == "hello_train" {
		return nil, nil
	}
	_, diags := decode(req.Config)
	return diags, nil
}

func (hello) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	if req.Type == "hello_train" {
		return &api.PlanResponse{Details: []api.Detail{{Key: "trains", Value: trainSummary(req.Config)}}}, nil
	}
	cfg, diags := decode(req.Config)
	return &api.PlanResponse{
		Details:     []api.Detail{{Key: "greeting", Value: cfg.message()}, {Key: "file", Value: cfg.File}},
		Diagnostics: diags,
	}, nil
}

func (c config) message() string { return fmt.Sprintf("%s, %s!\n", c.Greeting, c.Name) }

// named is what a hello_train stage reads of a meta-argument's value.
type named struct {
	Name string `cty:"name"`
}

// trainBody is a hello_train body: the meta-arguments arrive in its
// config, resolved by the engine, like its own arguments.
type trainBody struct {
	Model    named    `cty:"model"`
	Layout   named    `cty:"layout"`
	Hardware named    `cty:"hardware"`
	Tokens   *float64 `cty:"tokens"`
}

// trainSummary names the model, the layout and hardware and the budget a
// hello_train stage received; "?" stands for what is not known yet.
func trainSummary(body cty.Value) string {
	b := trainBody{Model: named{"?"}, Layout: named{"?"}, Hardware: named{"?"}}
	sdk.Decode(body, &b) // the engine checked the meta-arguments; the schema, tokens
	tokens := "?"
	if b.Tokens != nil {
		tokens = strconv.FormatFloat(*b.Tokens, 'g', 4, 64)
	}
	return fmt.Sprintf("model %s with layout %s on %s, %s tokens", b.Model.Name, b.Layout.Name, b.Hardware.Name, tokens)
}

func (hello) ApplyStage(_ context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	if req.Type == "hello_train" {
		return writeResult(req, sink, "plan", "plan.txt", trainSummary(req.Config)+"\n", "")
	}
	cfg, diags := decode(req.Config)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}, nil
	}
	return writeResult(req, sink, "greeting", cfg.File, cfg.message(), "greeted "+cfg.Name)
}

// writeResult writes msg to file in the run directory, reports it as the
// artifact called name and outputs its path.
func writeResult(req *api.ApplyRequest, sink api.EventSink, name, file, msg, logLine string) (*api.ApplyResponse, error) {
	path, err := api.AbsPath(req.RunDir, file) // outputs that are paths are absolute
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(msg), 0o644); err != nil {
		return nil, err
	}
	sdk.Logger().Info("wrote", "path", path)
	now := time.Now()
	if logLine != "" {
		sink.Send(api.Event{Time: now, Log: &api.Log{Level: "info", Message: logLine}})
	}
	sink.Send(api.Event{Time: now, Artifact: &api.Artifact{Name: name, Path: path, Bytes: int64(len(msg))}})
	return &api.ApplyResponse{Outputs: map[string]cty.Value{"path": cty.StringVal(path)}}, nil
}

func (hello) Stop(context.Context) error { return nil }

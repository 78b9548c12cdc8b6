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
// Install it by putting the built executable on $GPUFLOW_PLUGIN_PATH, in
// .gpuflow/plugins, beside gpuflow or on $PATH.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
		StageTypes: map[string]*api.BlockSchema{"hello": {
			Description: "Writes a greeting to a file.",
			Attributes: map[string]*api.Attribute{
				"name":     {Type: cty.String, Required: true, Description: "Who to greet."},
				"greeting": {Type: cty.String, Description: `The greeting; default "Hello".`},
				"file":     {Type: cty.String, Description: `File name in the run directory; default "greeting.txt".`},
			},
		}},
	}, nil
}

// config is a decoded stage body.
type config struct {
	name, greeting, file string
}

// decode reads the body and says what is wrong with it; unknown values
// (plan time) are left empty and not checked.
func decode(body cty.Value) (config, api.Diagnostics) {
	cfg := config{greeting: "Hello", file: "greeting.txt"}
	var diags api.Diagnostics
	if v := body.GetAttr("name"); v.IsKnown() && !v.IsNull() {
		cfg.name = v.AsString()
		if cfg.name == "" {
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  "Empty name",
				Detail:   "A greeting needs someone to greet: give name a value.",
				Path:     cty.GetAttrPath("name"),
			})
		}
	}
	if v := body.GetAttr("greeting"); v.IsKnown() && !v.IsNull() {
		cfg.greeting = v.AsString()
	}
	if v := body.GetAttr("file"); v.IsKnown() && !v.IsNull() {
		cfg.file = v.AsString()
		if !filepath.IsLocal(cfg.file) {
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  "File outside the run directory",
				Detail:   fmt.Sprintf("%q must be a relative path that stays inside the stage's run directory.", cfg.file),
				Path:     cty.GetAttrPath("file"),
			})
		}
	}
	return cfg, diags
}

func (hello) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	_, diags := decode(req.Config)
	return diags, nil
}

func (hello) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	cfg, diags := decode(req.Config)
	return &api.PlanResponse{
		Details:     []api.Detail{{Key: "greeting", Value: cfg.message()}, {Key: "file", Value: cfg.file}},
		Diagnostics: diags,
	}, nil
}

func (c config) message() string { return fmt.Sprintf("%s, %s!\n", c.greeting, c.name) }

func (hello) ApplyStage(_ context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	cfg, diags := decode(req.Config)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}, nil
	}
	path, err := api.AbsPath(req.RunDir, cfg.file) // outputs that are paths are absolute
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	msg := cfg.message()
	if err := os.WriteFile(path, []byte(msg), 0o644); err != nil {
		return nil, err
	}
	sdk.Logger().Info("wrote greeting", "path", path)
	now := time.Now()
	sink.Send(api.Event{Time: now, Log: &api.Log{Level: "info", Message: "greeted " + cfg.name}})
	sink.Send(api.Event{Time: now, Artifact: &api.Artifact{Name: "greeting", Path: path, Bytes: int64(len(msg))}})
	return &api.ApplyResponse{Outputs: map[string]cty.Value{"path": cty.StringVal(path)}}, nil
}

func (hello) Stop(context.Context) error { return nil }

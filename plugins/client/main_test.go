package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/builtin"
	"github.com/gpuflow/gpuflow/plugins/client"
	"github.com/gpuflow/gpuflow/plugins/fake"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// The test binary doubles as every plugin these tests run: as
// `<binary> internal-plugin NAME` it serves a built-in, as it would in
// gpuflow, and run through a link named gpuflow-plugin-NAME it serves the
// test plugin NAME. That spares a go build per plugin.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == client.BuiltinCommand {
		os.Exit(builtin.Serve(os.Args[2]))
	}
	if name, ok := strings.CutPrefix(filepath.Base(os.Args[0]), client.ExecutablePrefix); ok {
		servePlugin(name)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func servePlugin(name string) {
	switch name {
	case "echo":
		sdk.Serve(echoProvider{})
	case "fake":
		sdk.Serve(fake.NewProcess())
	case "future":
		// A plugin built for a protocol version 2 that this host lacks.
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig:  sdk.Handshake,
			VersionedPlugins: map[int]plugin.PluginSet{2: {sdk.ProviderKey: futurePlugin{}}},
			GRPCServer:       plugin.DefaultGRPCServer,
		})
	case "stranger":
		// A go-plugin plugin of another program, with its own cookie.
		hs := sdk.Handshake
		hs.MagicCookieKey, hs.MagicCookieValue = "OTHER_APP_PLUGIN", "other"
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig: hs,
			Plugins:         plugin.PluginSet{"x": futurePlugin{}},
			GRPCServer:      plugin.DefaultGRPCServer,
		})
	default:
		os.Stderr.WriteString("no test plugin " + name + "\n")
		os.Exit(3)
	}
}

type futurePlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (futurePlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }
func (futurePlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("no client")
}

// echoProvider has stage type "echo": it returns its config's value as an
// output, sends one event of each kind, and warns about the second
// element of a list value.
type echoProvider struct{}

var echoSchema = &api.Schema{
	Name:         "echo",
	Version:      "2.5.0",
	Capabilities: []string{api.CapabilityConcurrentApply},
	StageTypes: map[string]*api.BlockSchema{"echo": {
		Attributes: map[string]*api.Attribute{
			"value": {Type: cty.DynamicPseudoType, Required: true},
			"gpus":  {Type: cty.Number},
		},
		Blocks: map[string]*api.NestedBlock{
			"check": {Nesting: api.NestingList, MaxItems: 2, Block: api.BlockSchema{
				Attributes: map[string]*api.Attribute{"min": {Type: cty.Number}},
			}},
		},
	}},
}

func (echoProvider) Schema(context.Context) (*api.Schema, error) { return echoSchema, nil }

func (echoProvider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	v := req.Config.GetAttr("value")
	if !v.IsKnown() || !v.Type().IsListType() && !v.Type().IsTupleType() {
		return nil, nil
	}
	return api.Diagnostics{{
		Severity: api.Warning, Summary: "Second element", Detail: "It is here.",
		Path: cty.GetAttrPath("value").IndexInt(1),
	}}, nil
}

func (echoProvider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	known := "known"
	if !req.Config.IsWhollyKnown() {
		known = "unknown"
	}
	return &api.PlanResponse{
		Details:          []api.Detail{{Key: "value", Value: known}, {Key: "env", Value: req.Env["K"]}},
		Claims:           api.Claims{Nodes: 1, GPUsPerNode: 4},
		ExpectedDuration: 1500 * time.Millisecond,
	}, nil
}

func (echoProvider) ApplyStage(_ context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	sdk.Logger().Info("echo applying", "stage", req.Name)
	at := time.Unix(1700000000, 0)
	sink.Send(api.Event{Time: at, Log: &api.Log{Level: "info", Message: "hello"}})
	sink.Send(api.Event{Time: at, Progress: &api.Progress{Label: "work", Done: 1, Total: 2, Unit: "items"}})
	sink.Send(api.Event{Time: at, Metric: &api.Metric{Name: "loss", Value: 0.25, Unit: "nats", Step: 10}})
	sink.Send(api.Event{Time: at, Artifact: &api.Artifact{Name: "out", Path: req.RunDir + "/out", Bytes: 42}})
	return &api.ApplyResponse{
		Outputs: map[string]cty.Value{
			"value": req.Config.GetAttr("value"),
			"where": cty.StringVal(req.WorkDir + "|" + req.RunDir),
		},
		Diagnostics: api.Diagnostics{{Severity: api.Warning, Summary: "Echoed", Path: cty.GetAttrPath("value")}},
	}, nil
}

func (echoProvider) Stop(context.Context) error { return nil }

// pluginDir returns a directory holding links named gpuflow-plugin-NAME to
// the test binary, for each name.
func pluginDir(t testing.TB, names ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range names {
		if err := os.Symlink(exe, filepath.Join(dir, client.ExecutablePrefix+name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// newManager returns a manager over opts whose built-ins are the test
// binary re-executed, closed at the end of the test.
func newManager(t testing.TB, opts client.Options) *client.Manager {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Executable = exe
	if opts.Dirs == nil {
		opts.Dirs = []string{}
	}
	m, err := client.NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

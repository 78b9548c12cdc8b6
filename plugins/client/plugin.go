package client

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpuflow/gpuflow/plugins/api"
	pluginv1 "github.com/gpuflow/gpuflow/plugins/proto/v1"
	"github.com/gpuflow/gpuflow/plugins/proto/v1/convert"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// Plugin is one running plugin process. It implements api.Provider; its
// Schema is fetched once and cached. It is safe for concurrent use.
type Plugin struct {
	source Source
	client *plugin.Client
	cmd    *exec.Cmd
	rpc    pluginv1.PluginClient
	stderr *tail
	// onClose lets a Manager forget a process its owner closed.
	onClose func()

	schemaMu sync.Mutex
	schema   *api.Schema
}

var _ api.Provider = (*Plugin)(nil)

// exitWait bounds how long a failed call waits for the process to be seen
// dead before it reports a plain transport error instead of a crash.
const exitWait = 2 * time.Second

// launch starts src's process and connects to it.
func launch(src Source, opts *Options) (*Plugin, error) {
	cmd := exec.Command(src.Path, src.Args...)
	detach(cmd)
	p := &Plugin{source: src, cmd: cmd, stderr: newTail(opts.StderrLines)}
	logger := namedLogger{opts.Logger.Named("plugin." + src.Name)}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: versionedPlugins(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Managed:          true,
		StartTimeout:     opts.StartTimeout,
		Logger:           logger,
		Stderr:           &lineWriter{line: p.stderr.addStderrLine},
		SyncStderr:       &lineWriter{line: p.stderr.addStderrLine},
		SyncStdout:       &lineWriter{line: func(l string) { logger.Debug(l, "stream", "stdout") }},
	})
	if err := p.connect(); err != nil {
		p.client.Kill()
		return nil, err
	}
	return p, nil
}

func (p *Plugin) connect() error {
	conn, err := p.client.Client()
	if err != nil {
		return p.startError(err)
	}
	raw, err := conn.Dispense(sdk.ProviderKey)
	if err != nil {
		return fmt.Errorf("plugin %q (%s): %w", p.source.Name, p.source.Path, err)
	}
	p.rpc = raw.(pluginv1.PluginClient)
	return nil
}

// startError explains a failed handshake: a process that died (a crash, a
// wrong cookie) is reported with its stderr; a protocol mismatch with what
// to do about it.
func (p *Plugin) startError(err error) error {
	if strings.Contains(err.Error(), "incompatible API version") {
		return fmt.Errorf("plugin %q (%s) speaks no protocol version this gpuflow speaks (%d): %v; "+
			"use a build of the plugin made for protocol %[3]d, or a gpuflow that speaks the plugin's version",
			p.source.Name, p.source.Path, api.ProtocolVersion, err)
	}
	if p.waitExited(exitWait) {
		return p.crashError("start-up", err)
	}
	return fmt.Errorf("starting plugin %q (%s): %w", p.source.Name, p.source.Path, err)
}

// waitExited reports whether the process has exited, waiting up to limit
// for go-plugin to notice.
func (p *Plugin) waitExited(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for !p.client.Exited() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func (p *Plugin) crashError(during string, err error) *CrashError {
	exit := "exited"
	// go-plugin sets Exited only after cmd.Wait returned, under a lock that
	// Exited also takes, so ProcessState is safe to read here.
	if st := p.cmd.ProcessState; st != nil {
		exit = st.String()
	}
	return &CrashError{
		Plugin: p.source.Name,
		Path:   p.source.Path,
		During: during,
		Exit:   exit,
		Stderr: p.stderr.Lines(),
		Err:    err,
	}
}

// CrashError reports a plugin process that died. Stderr holds its last
// lines, where a Go panic or the plugin's last log lines are.
type CrashError struct {
	Plugin string
	Path   string
	During string // "start-up" or the RPC, such as "ApplyStage"
	Exit   string // such as "exit status 2" or "signal: killed"
	Stderr []string
	Err    error // what the transport said
}

func (e *CrashError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %q (%s) died during %s (%s)", e.Plugin, e.Path, e.During, e.Exit)
	if len(e.Stderr) == 0 {
		b.WriteString("; it wrote nothing to stderr")
		return b.String()
	}
	b.WriteString("; the last lines of its stderr:")
	for _, l := range e.Stderr {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	return b.String()
}

func (e *CrashError) Unwrap() error { return e.Err }

// callError turns a failed RPC into the error the caller sees: the
// caller's own context error, a CrashError if the process died, or the
// plugin's error message.
func (p *Plugin) callError(ctx context.Context, method string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("plugin %q: %s: %w", p.source.Name, method, ctx.Err())
	}
	st, _ := status.FromError(err)
	if st.Code() == codes.Unavailable && p.waitExited(exitWait) {
		return p.crashError(method, err)
	}
	if p.client.Exited() {
		return p.crashError(method, err)
	}
	return fmt.Errorf("plugin %q: %s: %s", p.source.Name, method, st.Message())
}

// Name is the plugin's name as discovered (gpuflow-plugin-NAME, or the
// built-in's name).
func (p *Plugin) Name() string { return p.source.Name }

// Source says where the plugin came from.
func (p *Plugin) Source() Source { return p.source }

// Exited reports whether the process has ended.
func (p *Plugin) Exited() bool { return p.client.Exited() }

// Stderr returns the last lines of the process's stderr (hclog lines of
// level info and above, and everything else it wrote there).
func (p *Plugin) Stderr() []string { return p.stderr.Lines() }

// Close ends the process: a graceful shutdown, then a kill after two
// seconds. Running ApplyStage calls see their context cancelled; call Stop
// first and wait for them to end cleanly.
func (p *Plugin) Close() {
	p.client.Kill()
	if p.onClose != nil {
		p.onClose()
	}
}

// Schema returns the plugin's schema, asking the process only once.
func (p *Plugin) Schema(ctx context.Context) (*api.Schema, error) {
	p.schemaMu.Lock()
	defer p.schemaMu.Unlock()
	if p.schema != nil {
		return p.schema, nil
	}
	resp, err := p.rpc.GetSchema(ctx, &pluginv1.GetSchema_Request{})
	if err != nil {
		return nil, p.callError(ctx, "GetSchema", err)
	}
	schema, err := convert.SchemaFromProto(resp.GetSchema())
	if err != nil {
		return nil, fmt.Errorf("plugin %q sent a schema this gpuflow cannot read: %w", p.source.Name, err)
	}
	p.schema = schema
	return schema, nil
}

// ValidateStage implements api.Provider.
func (p *Plugin) ValidateStage(ctx context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	stage, err := convert.StageRequestToProto(req)
	if err != nil {
		return nil, err
	}
	resp, err := p.rpc.ValidateStage(ctx, &pluginv1.ValidateStage_Request{Stage: stage})
	if err != nil {
		return nil, p.callError(ctx, "ValidateStage", err)
	}
	return convert.DiagnosticsFromProto(resp.GetDiagnostics()), nil
}

// PlanStage implements api.Provider.
func (p *Plugin) PlanStage(ctx context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	stage, err := convert.StageRequestToProto(req)
	if err != nil {
		return nil, err
	}
	resp, err := p.rpc.PlanStage(ctx, &pluginv1.PlanStage_Request{Stage: stage})
	if err != nil {
		return nil, p.callError(ctx, "PlanStage", err)
	}
	return convert.PlanFromProto(resp), nil
}

// ApplyStage implements api.Provider: events go to sink as the plugin
// sends them, from the calling goroutine. If the process dies the error is
// a *CrashError.
func (p *Plugin) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	preq, err := convert.ApplyRequestToProto(req)
	if err != nil {
		return nil, err
	}
	// Cancelling on return releases the stream once the Result is in.
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := p.rpc.ApplyStage(streamCtx, preq)
	if err != nil {
		return nil, p.callError(ctx, "ApplyStage", err)
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return nil, fmt.Errorf("plugin %q: ApplyStage ended without a result", p.source.Name)
		}
		if err != nil {
			return nil, p.callError(ctx, "ApplyStage", err)
		}
		if result := msg.GetResult(); result != nil {
			resp, err := convert.ResultFromProto(result)
			if err != nil {
				return nil, fmt.Errorf("plugin %q sent a result this gpuflow cannot read: %w", p.source.Name, err)
			}
			return resp, nil
		}
		if ev, ok := convert.EventFromProto(msg); ok {
			sink.Send(ev)
		}
	}
}

// Stop implements api.Provider.
func (p *Plugin) Stop(ctx context.Context) error {
	if _, err := p.rpc.Stop(ctx, &pluginv1.Stop_Request{}); err != nil {
		return p.callError(ctx, "Stop", err)
	}
	return nil
}

// namedLogger keeps the name it was given: go-plugin names its loggers
// after the executable, which for every built-in plugin is "gpuflow", so
// lines are logged under "plugin.NAME" instead.
type namedLogger struct{ hclog.Logger }

func (l namedLogger) Named(string) hclog.Logger { return l }

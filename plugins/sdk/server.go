package sdk

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpuflow/gpuflow/plugins/api"
	pluginv1 "github.com/gpuflow/gpuflow/plugins/proto/v1"
	"github.com/gpuflow/gpuflow/plugins/proto/v1/convert"
)

// serverV1 serves a Provider over protocol v1. It is also the go-plugin
// Plugin that registers itself with the gRPC server.
type serverV1 struct {
	plugin.NetRPCUnsupportedPlugin
	pluginv1.UnimplementedPluginServer
	provider api.Provider
	applies  sync.WaitGroup
}

func newServerV1(p api.Provider) *serverV1 {
	return &serverV1{provider: p}
}

// GRPCServer registers the service; go-plugin calls it once.
func (s *serverV1) GRPCServer(_ *plugin.GRPCBroker, g *grpc.Server) error {
	pluginv1.RegisterPluginServer(g, s)
	return nil
}

// GRPCClient is the host's half, which plugins/client provides.
func (s *serverV1) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, status.Error(codes.Unimplemented, "the plugin side has no client")
}

// wait gives running applies up to limit to return after the server stopped.
func (s *serverV1) wait(limit time.Duration) {
	done := make(chan struct{})
	go func() {
		s.applies.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

func (s *serverV1) GetSchema(ctx context.Context, _ *pluginv1.GetSchema_Request) (*pluginv1.GetSchema_Response, error) {
	schema, err := s.provider.Schema(ctx)
	if err != nil {
		return nil, providerError(err)
	}
	ps, err := convert.SchemaToProto(schema)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding schema: %v", err)
	}
	return &pluginv1.GetSchema_Response{Schema: ps}, nil
}

func (s *serverV1) ValidateStage(ctx context.Context, req *pluginv1.ValidateStage_Request) (*pluginv1.ValidateStage_Response, error) {
	stage, err := convert.StageRequestFromProto(req.GetStage())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	diags, err := s.provider.ValidateStage(ctx, stage)
	if err != nil {
		return nil, providerError(err)
	}
	return &pluginv1.ValidateStage_Response{Diagnostics: convert.DiagnosticsToProto(diags)}, nil
}

func (s *serverV1) PlanStage(ctx context.Context, req *pluginv1.PlanStage_Request) (*pluginv1.PlanStage_Response, error) {
	stage, err := convert.StageRequestFromProto(req.GetStage())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	plan, err := s.provider.PlanStage(ctx, stage)
	if err != nil {
		return nil, providerError(err)
	}
	if plan == nil {
		plan = &api.PlanResponse{}
	}
	return convert.PlanToProto(plan), nil
}

func (s *serverV1) ApplyStage(req *pluginv1.ApplyStage_Request, stream grpc.ServerStreamingServer[pluginv1.ApplyStage_Event]) error {
	s.applies.Add(1)
	defer s.applies.Done()
	apply, err := convert.ApplyRequestFromProto(req)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	sink := &streamSink{stream: stream}
	resp, err := s.provider.ApplyStage(stream.Context(), apply, sink)
	if sendErr := sink.close(); sendErr != nil {
		return sendErr
	}
	if err != nil {
		return providerError(err)
	}
	if resp == nil {
		resp = &api.ApplyResponse{}
	}
	result, err := convert.ResultToProto(resp)
	if err != nil {
		return status.Errorf(codes.Internal, "encoding result: %v", err)
	}
	return stream.Send(result)
}

func (s *serverV1) Stop(ctx context.Context, _ *pluginv1.Stop_Request) (*pluginv1.Stop_Response, error) {
	if err := s.provider.Stop(ctx); err != nil {
		return nil, providerError(err)
	}
	return &pluginv1.Stop_Response{}, nil
}

// providerError turns a Go error from the provider into a gRPC status,
// keeping the codes of context errors so the host can tell them apart.
func providerError(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}

// streamSink sends events on an ApplyStage stream. gRPC streams allow one
// sender at a time, and api.EventSink promises safety across goroutines, so
// sends are serialised. Events sent after close are dropped: the stream has
// moved on to its Result.
type streamSink struct {
	mu     sync.Mutex
	stream grpc.ServerStreamingServer[pluginv1.ApplyStage_Event]
	closed bool
	err    error
}

func (s *streamSink) Send(e api.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.err != nil {
		return
	}
	s.err = s.stream.Send(convert.EventToProto(e))
}

// close ends sending and returns the first send error, if any.
func (s *streamSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.err
}

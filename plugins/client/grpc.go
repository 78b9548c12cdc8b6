package client

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/gpuflow/gpuflow/plugins/proto/v1"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// grpcPluginV1 is the host's half of protocol v1 for go-plugin: it turns
// the connection into a generated client.
type grpcPluginV1 struct {
	plugin.NetRPCUnsupportedPlugin
}

func (grpcPluginV1) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the host side serves no plugin")
}

func (grpcPluginV1) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return pluginv1.NewPluginClient(conn), nil
}

// versionedPlugins are the protocol versions this host speaks; go-plugin
// picks the highest one the plugin also speaks. A v2 adds its entry here.
func versionedPlugins() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {sdk.ProviderKey: grpcPluginV1{}},
	}
}

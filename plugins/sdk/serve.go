package sdk

import (
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Handshake is the go-plugin handshake shared by gpuflow and its plugins.
// The cookie only guards against running a plugin by hand; it is not a
// secret. ProtocolVersion is the default offered when no versioned plugin
// set matches; the negotiated version comes from VersionedPlugins.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  api.ProtocolVersion,
	MagicCookieKey:   "GPUFLOW_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "b3f1c0de9a6e4d21-gpuflow-stage-plugin",
}

// ProviderKey names the provider in go-plugin's plugin set; the host
// dispenses it by this key.
const ProviderKey = "provider"

// exitGrace bounds how long Serve waits, once the host has closed the
// connection, for running ApplyStage calls to clean up (kill their child
// processes). It stays under the two seconds go-plugin's host waits before
// it kills the plugin process.
const exitGrace = 1500 * time.Millisecond

// Serve runs p as a plugin process until the host closes it. It is the
// whole of a plugin's main. Run by hand (without the host's cookie), it
// prints that it is a plugin and exits with status 1.
func Serve(p api.Provider) {
	v1 := newServerV1(p)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{1: {ProviderKey: v1}},
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           Logger(),
	})
	v1.wait(exitGrace)
}

// stderr is the process's own stderr, captured before plugin.Serve points
// os.Stderr at the stream it forwards to the host.
var stderr = os.Stderr

// Logger returns the plugin's logger. Its lines go to the plugin's stderr as
// JSON, which the host parses and logs again under the plugin's name at the
// host's log level. The host keeps the last info-or-higher lines to report a
// crash. The same logger is returned on every call.
var Logger = sync.OnceValue(func() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Level:      hclog.Trace,
		Output:     stderr,
		JSONFormat: true,
	})
})

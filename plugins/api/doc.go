// Package api is the Go-level contract between gpuflow and its stage plugins:
// the Provider interface a plugin implements, the stage body schema it
// declares, and the events and outputs it reports while applying.
//
// It carries no protobuf types: plugins/sdk adapts a Provider to the gRPC
// protocol in plugins/proto/v1 on the plugin side, and plugins/client adapts
// the protocol back to a Provider on the host side, so the engine and plugin
// authors only ever see these types.
package api

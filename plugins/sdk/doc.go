// Package sdk is what a plugin author needs to turn an api.Provider into a
// gpuflow plugin executable: a main that calls Serve.
//
// It owns the plugin side of the transport: the go-plugin handshake (magic
// cookie and protocol versions), the gRPC adapter for protocol v1, and a
// logger whose lines the host re-emits under the plugin's name. It also
// offers Stopper, a small helper for implementing Provider.Stop, and
// Decode, which reads a stage body into a Go struct by its field tags
// (sizes and durations with their units, optional blocks over their
// defaults, values not known yet listed in an Unknowns field), with
// diagnostics that point at the attribute at fault, and ParseBytes, the
// sizes it reads.
//
// It is not the host side (plugins/client) and holds no plugin logic.
package sdk

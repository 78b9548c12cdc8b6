// Package convert translates between the Go-level plugin contract in
// plugins/api and the generated messages of protocol version 1.
//
// It is shared by the two adapters, plugins/sdk on the plugin side and
// plugins/client on the host side, so that both ends encode a value, a path
// or a diagnostic the same way. It holds no transport code.
package convert

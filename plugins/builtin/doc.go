// Package builtin lists the plugins compiled into the gpuflow binary and
// serves one of them when gpuflow is re-executed as
// `gpuflow internal-plugin NAME` (see plugins/client).
//
// A built-in plugin still runs in its own process; this package only lets
// the one binary be every built-in plugin's executable. Adding a built-in
// is one line in the table in builtin.go.
package builtin

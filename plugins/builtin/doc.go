// Package builtin lists the plugins compiled into the gpuflow binary and
// serves one of them when gpuflow is re-executed as
// `gpuflow internal-plugin NAME` (see plugins/client).
//
// A built-in plugin still runs in its own process; this package only lets
// the one binary be every built-in plugin's executable. Adding a built-in
// is one entry in the constructors table of builtin.go, made there or from
// a file of its own (dataprep.go, gpubench.go, train.go).
package builtin

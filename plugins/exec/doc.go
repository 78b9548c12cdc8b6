// Package exec is the built-in plugin for stage type "exec": it runs one
// command, streams its output lines as log events, keeps them in the run
// directory, and outputs its exit code and the tail of its stdout.
//
//	stage "exec" "NAME" {
//	  command = ["prog", "arg"]   # required; no shell unless you run one
//	  env     = { KEY = "value" } # added to gpuflow's environment and the stage's
//	  dir     = "sub/dir"         # relative to the workload's directory
//	  timeout = "10m"             # stopped, and failed, when exceeded
//	}
//
// The command runs in its own process group, so stopping a stage (Stop,
// timeout, the host going away) reaches everything it started: SIGTERM,
// a grace period, then SIGKILL. It is a provider, not a shell: it does no
// word splitting, globbing or variable expansion.
package exec

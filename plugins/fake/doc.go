// Package fake is a stage plugin for testing the engine: stage type "fake"
// does what its body asks, succeed, fail, crash, hang, panic or exit, after
// an optional duration with progress events, and claims GPUs as told.
//
//	stage "fake" "NAME" {
//	  behavior       = "succeed" # or "fail", "crash", "hang", "panic", "exit"
//	  duration       = "200ms"
//	  outputs        = { key = "value" }
//	  gpus           = 2
//	  progress_steps = 4
//	}
//
// Use New for an in-process provider, or run the plugin process built from
// cmd/gpuflow-plugin-fake (Build does it), where crash, panic and exit
// really end the process. It is not for use outside tests.
package fake

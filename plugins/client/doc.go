// Package client is the host side of the plugin system: it finds plugin
// executables, starts them as processes through hashicorp/go-plugin, and
// hands the engine an api.Provider for each one.
//
// Built-in plugins are the gpuflow binary itself re-executed as
// `gpuflow internal-plugin NAME`; external plugins are executables named
// gpuflow-plugin-NAME found by SearchDirs. A Manager keeps one shared
// process per plugin, started on first use, and can start a fresh process
// on request so that a crash takes down a single stage.
//
// It is not the engine: it neither decodes HCL nor keeps state, and it
// never imports the plugins it runs.
package client

// Command gpuflow-plugin-fake is the fake plugin as a plugin process, for
// tests: see package fake.
package main

import (
	"github.com/gpuflow/gpuflow/plugins/fake"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

func main() {
	sdk.Serve(fake.NewProcess())
}

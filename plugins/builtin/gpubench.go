package builtin

import (
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench"
)

func init() {
	constructors[gpubench.Name] = func() api.Provider { return gpubench.New() }
}

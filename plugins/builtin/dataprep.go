package builtin

import (
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/dataprep"
)

func init() {
	constructors[dataprep.Name] = func() api.Provider { return dataprep.New() }
}

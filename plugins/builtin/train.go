package builtin

import (
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/train"
)

func init() {
	constructors[train.Name] = func() api.Provider { return train.Provider{} }
}

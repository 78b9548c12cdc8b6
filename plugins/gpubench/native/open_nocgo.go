//go:build !cgo || !linux

package native

import (
	"errors"

	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// Open always fails in this build: loading the NVIDIA libraries needs cgo
// on Linux.
func Open(Options) (node.Node, error) {
	return nil, errors.New("this gpuflow was built without cgo (CGO_ENABLED=0) or not for Linux, so it cannot load the NVIDIA libraries; rebuild with CGO_ENABLED=1 on Linux")
}

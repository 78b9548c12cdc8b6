package native

import (
	"strings"
	"testing"

	"github.com/gpuflow/gpuflow/plugins/gpubench/libsearch"
)

// On a machine without the driver, Open must fail at once and say what it
// sought and where.
func TestOpenWithoutDriverNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	if res := libsearch.System(nil).Find(libsearch.CUDA); res.Found {
		t.Skipf("this machine has a CUDA driver (%s)", res.Path)
	}
	_, err := Open(Options{LibDirs: []string{"/nowhere/lib"}, NeedNCCL: true})
	if err == nil {
		t.Fatal("Open succeeded without a driver")
	}
	for _, want := range []string{"libcuda.so.1", "/nowhere/lib", "/usr/local/nvidia/lib64"} {
		if !strings.Contains(err.Error(), want) && !strings.Contains(err.Error(), "without cgo") {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

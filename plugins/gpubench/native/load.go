//go:build cgo && linux

package native

// #cgo LDFLAGS: -ldl
// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/gpuflow/gpuflow/plugins/gpubench/libsearch"
)

// The libraries are process-wide: once loaded they stay loaded.
var (
	loadMu sync.Mutex
	loaded = map[int]string{}
)

var libIDs = map[string]int{
	libsearch.CUDA.Name:     C.GF_CUDA,
	libsearch.NVML.Name:     C.GF_NVML,
	libsearch.CuBLASLt.Name: C.GF_CUBLASLT,
	libsearch.NCCL.Name:     C.GF_NCCL,
}

// load finds and opens each library not yet loaded. Every failure is
// reported, each with where the library was sought.
func load(search libsearch.Search, libs []libsearch.Library) (map[string]string, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	var errs, missing []string
	var looked []string
	paths := map[string]string{}
	for _, lib := range libs {
		id := libIDs[lib.Name]
		if p, ok := loaded[id]; ok {
			paths[lib.Name] = p
			continue
		}
		res := search.Find(lib)
		if err := dlopen(id, res.Path); err != nil {
			if res.Found {
				errs = append(errs, err.Error())
			} else {
				missing = append(missing, fmt.Sprintf("%s (%s)", lib.Name, strings.Join(lib.Files, ", ")))
				looked = res.Looked
			}
			continue
		}
		loaded[id] = res.Path
		paths[lib.Name] = res.Path
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Sprintf("not found: %s; looked in %s and the dynamic loader's cache; set %s or the stage's lib_dirs to the folder that holds them",
			strings.Join(missing, ", "), strings.Join(looked, ", "), libsearch.DirEnv))
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return paths, nil
}

func dlopen(id int, path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var buf [512]C.char
	if C.gf_load(C.int(id), cpath, &buf[0], C.size_t(len(buf))) != 0 {
		return fmt.Errorf("%s", C.GoString(&buf[0]))
	}
	return nil
}

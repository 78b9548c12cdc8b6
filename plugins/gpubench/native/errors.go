//go:build cgo && linux

package native

// #include "shim.h"
import "C"

import "fmt"

// cudaError is a failed CUDA driver call.
type cudaError struct {
	call string
	code int
	msg  string
}

func (e *cudaError) Error() string {
	return fmt.Sprintf("%s: CUDA error %d: %s", e.call, e.code, e.msg)
}

// cuCheck turns a CUresult into an error naming the call.
func cuCheck(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return &cudaError{call: call, code: int(r), msg: C.GoString(C.gf_cuErrorString(r))}
}

// nvmlNotSupported and nvmlMissing are the codes for a query this GPU or
// this NVML cannot answer; they mark a field unsupported rather than fail.
const (
	nvmlNotSupported = 3
	nvmlMissing      = C.GF_MISSING_SYMBOL
)

func nvmlCheck(call string, r C.nvmlReturn_t) error {
	if r == 0 {
		return nil
	}
	if r == nvmlMissing {
		return fmt.Errorf("%s: not in this NVML", call)
	}
	return fmt.Errorf("%s: NVML error %d: %s", call, int(r), C.GoString(C.gf_nvmlErrorString(r)))
}

func ltCheck(call string, s C.cublasStatus_t) error {
	if s == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (%d)", call, C.GoString(C.gf_cublasLtGetStatusName(s)), int(s))
}

// ncclCheck adds NCCL's last error message for comm when there is one.
func ncclCheck(call string, r C.ncclResult_t, comm C.ncclComm_t) error {
	if r == 0 {
		return nil
	}
	msg := C.GoString(C.gf_ncclGetErrorString(r))
	if last := C.GoString(C.gf_ncclGetLastError(comm)); last != "" {
		msg += ": " + last
	}
	return fmt.Errorf("%s: NCCL error %d: %s", call, int(r), msg)
}

package kernels

import _ "embed"

// PTX is the PTX text of kernels.cu (see gen.sh), NUL-terminated as
// cuModuleLoadData wants it.
//
//go:embed kernels.ptx
var ptx string

// PTX returns the module text with its terminating NUL.
func PTX() string { return ptx + "\x00" }

// Kernel names, as exported by kernels.cu.
const (
	FillRandom       = "fill_random"
	Triad            = "triad"
	CountTriadWrong  = "count_triad_wrong"
	CountRandomWrong = "count_random_wrong"
	FillPattern      = "fill_pattern"
	CheckPattern     = "check_pattern"
	GEMMSample       = "gemm_sample"
)

// Data type codes the kernels take (DT_* in kernels.cu).
const (
	DTF32  = 0
	DTF16  = 1
	DTBF16 = 2
	DTE4M3 = 3
)

// Check modes of check_pattern (MODE_* in kernels.cu).
const (
	ModeAllReduce     = 0
	ModeAllGather     = 1
	ModeReduceScatter = 2
	ModeAlltoall      = 3
	ModeBroadcast     = 4
)

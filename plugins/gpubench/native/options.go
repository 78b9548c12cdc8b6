package native

// Options say where to look for the libraries and which are needed beyond
// the CUDA driver and NVML.
type Options struct {
	// LibDirs are searched before the standard folders.
	LibDirs      []string
	NeedCuBLASLt bool
	NeedNCCL     bool
}

// PTXEnv names a variable holding a PTX file to load instead of the
// embedded kernels, for work on the kernels themselves.
const PTXEnv = "GPUFLOW_GPUBENCH_PTX"

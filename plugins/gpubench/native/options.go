package native

// Options say where to look for the libraries and which are needed beyond
// the CUDA driver and NVML.
type Options struct {
	// LibDirs are searched before the standard folders.
	LibDirs      []string
	NeedCuBLASLt bool
	NeedNCCL     bool
	// Bootstrap is set for a job of several nodes; nil builds the
	// communicator over this node's GPUs alone.
	Bootstrap *Bootstrap
}

// PTXEnv names a variable holding a PTX file to load instead of the
// embedded kernels, for work on the kernels themselves.
const PTXEnv = "GPUFLOW_GPUBENCH_PTX"

// Bootstrap joins this node's GPUs to one NCCL communicator spanning every
// node of a job: local GPU i becomes global rank NodeRank×G + i of
// Nodes×G, G being this node's GPU count (the same on every node).
type Bootstrap struct {
	NodeRank, Nodes int
	// ShareID is called once, before ncclCommInitRank: on node 0 with the
	// id from ncclGetUniqueId, on the others with nil. It returns the id
	// every rank must use (node 0's).
	ShareID func(id []byte) ([]byte, error)
}

package rundir

import "github.com/gpuflow/gpuflow/plugins/api"

// Environment every stage run through a cluster executor gets on each
// node, beside the plan's NCCL settings. The names are part of the plugin
// contract (plugins/api, where each is described); the job script and the
// node host set them.
const (
	EnvNodeRank     = api.EnvNodeRank
	EnvNodes        = api.EnvNodes
	EnvJobDir       = api.EnvJobDir
	EnvNCCLIDFile   = api.EnvNCCLIDFile
	EnvRendezvous   = api.EnvRendezvous
	EnvRendezvousID = api.EnvRendezvousID
	EnvTorchrunArgs = api.EnvTorchrunArgs
)

// NCCLIDFile is the name of EnvNCCLIDFile's file in the job directory.
const NCCLIDFile = "nccl-id"

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

// Environment of a node host in a Kubernetes pod, where no srun says which
// node it is: the job (the Job's name), and the node the pod runs on. The
// pod's index is Kubernetes' own JOB_COMPLETION_INDEX; the node count is
// EnvNodes.
const (
	EnvClusterJob = "GPUFLOW_CLUSTER_JOB"
	EnvNodeName   = "GPUFLOW_NODE_NAME"
	// EnvPodIndex is set by Kubernetes in every pod of an Indexed Job.
	EnvPodIndex = "JOB_COMPLETION_INDEX"
)

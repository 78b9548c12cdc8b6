package api

// Environment a stage gets in StageRequest.Env on each node when it runs
// through a cluster executor (Slurm), beside the plan's NCCL settings. The
// job script and gpuflow's node host set it; plugins read it.
const (
	// EnvNodeRank is this node's index in the job, from 0.
	EnvNodeRank = "GPUFLOW_NODE_RANK"
	// EnvNodes is how many nodes the job has.
	EnvNodes = "GPUFLOW_NODES"
	// EnvJobDir is the job's directory on the shared file system, the same
	// on every node: the place for files the nodes exchange. It lies two
	// levels below the stage run's own directory (RUN/job-ID).
	EnvJobDir = "GPUFLOW_JOB_DIR"
	// EnvNCCLIDFile is where node 0 publishes NCCL's unique id (written to
	// a temporary name, then renamed) for the other nodes'
	// ncclCommInitRank.
	EnvNCCLIDFile = "GPUFLOW_NCCL_ID_FILE"
	// EnvRendezvous is torchrun's c10d rendezvous endpoint, HOST:PORT on
	// the job's first node.
	EnvRendezvous = "GPUFLOW_RDZV_ENDPOINT"
	// EnvRendezvousID names the rendezvous, the same on every node of one
	// job (Slurm's job ID): torchrun's --rdzv-id.
	EnvRendezvousID = "GPUFLOW_RDZV_ID"
	// EnvTorchrunArgs are the torchrun arguments for a multi-node launch
	// through that rendezvous: torchrun $GPUFLOW_TORCHRUN_ARGS SCRIPT ARGS.
	EnvTorchrunArgs = "GPUFLOW_TORCHRUN_ARGS"
)

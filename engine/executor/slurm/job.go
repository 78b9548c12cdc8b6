package slurm

import "time"

// Job is what a stage's script is rendered from: the executor block's
// settings and what the stage needs.
type Job struct {
	// Stage is the stage's address, TYPE.NAME; Plugin serves it.
	Stage  string
	Plugin string
	// Executor is the executor block's address, executor.slurm.NAME, for
	// messages.
	Executor string

	Partition string
	Account   string
	QoS       string
	// TimeLimit is zero for the partition's default; Slurm counts whole
	// minutes.
	TimeLimit      time.Duration
	Nodes          int
	GPUsPerNode    int
	CPUsPerTask    int
	Exclusive      bool
	ContainerImage string
	ExtraSbatch    []string
	// Env is the executor's environment, NCCLEnv the plan's NCCL settings;
	// both are exported on every node, NCCLEnv first.
	Env     []EnvVar
	NCCLEnv []EnvVar
	// Rendezvous asks for torchrun's c10d rendezvous on the first node.
	Rendezvous bool
	// Retries is how often a preempted job, or one that lost a node, is
	// submitted again.
	Retries int
}

// EnvVar is one exported variable.
type EnvVar struct {
	Name, Value string
}

// RendezvousPort is the port of the c10d rendezvous on the first node:
// torchrun's default.
const RendezvousPort = 29500

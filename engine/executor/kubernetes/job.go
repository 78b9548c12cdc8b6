package kubernetes

import "time"

// Job is what a stage's manifest is rendered from: the executor block's
// settings and what the stage needs. The plan records it.
type Job struct {
	// Stage is the stage's address, TYPE.NAME; Plugin serves it.
	Stage  string `json:"stage"`
	Plugin string `json:"plugin"`
	// Executor is the executor block's address, executor.kubernetes.NAME,
	// for messages.
	Executor string `json:"executor"`
	Target   Target `json:"target"`

	Namespace      string            `json:"namespace"`
	Image          string            `json:"image"`
	ServiceAccount string            `json:"service_account,omitempty"`
	Nodes          int               `json:"nodes"`
	GPUsPerNode    int               `json:"gpus_per_node"`
	NodeSelector   map[string]string `json:"node_selector,omitempty"`
	Tolerations    []Toleration      `json:"tolerations,omitempty"`
	Volumes        []Volume          `json:"volumes,omitempty"`
	Annotations    map[string]string `json:"annotations,omitempty"`
	// TimeLimitS is zero for none; it becomes the Job's
	// activeDeadlineSeconds.
	TimeLimitS float64 `json:"time_limit_s,omitempty"`
	// PendingTimeoutS is how long a pod may wait for a node before the
	// stage fails with the scheduler's reason.
	PendingTimeoutS float64 `json:"pending_timeout_s"`
	// Env is the executor's environment, NCCLEnv the plan's NCCL settings
	// (the hardware profile's multicast rule among them); both are set in
	// every pod, NCCLEnv first.
	Env     []EnvVar `json:"env,omitempty"`
	NCCLEnv []EnvVar `json:"nccl_env,omitempty"`
	// Rendezvous asks for torchrun's c10d rendezvous on the pod of index 0.
	Rendezvous bool `json:"rendezvous"`
	// JobSet renders a JobSet instead of a Job and a Service: the cluster
	// serves the JobSet API.
	JobSet bool `json:"jobset"`
	// Positions are where the executor block's arguments are written,
	// FILE:LINE:COL by argument name, so that a field the API server
	// rejects is reported at the argument it came from.
	Positions map[string]string `json:"positions,omitempty"`
}

// TimeLimit is the Job's time limit; zero for none.
func (j Job) TimeLimit() time.Duration { return seconds(j.TimeLimitS) }

// PendingTimeout is how long a pod may wait for a node.
func (j Job) PendingTimeout() time.Duration { return seconds(j.PendingTimeoutS) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// DefaultPendingTimeout is how long a pod may wait for a node when the
// executor does not say: long enough for a cluster autoscaler to add one.
const DefaultPendingTimeout = 10 * time.Minute

// Toleration is one entry of the pods' tolerations.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

// Volume is a PersistentVolumeClaim or a host path mounted in every pod.
type Volume struct {
	Name      string `json:"name"`
	MountPath string `json:"mount_path"`
	// Claim names a PersistentVolumeClaim; HostPath a directory on the
	// node. Exactly one is set.
	Claim    string `json:"claim,omitempty"`
	HostPath string `json:"host_path,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// EnvVar is one environment variable of the pods.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// RendezvousPort is the port of the c10d rendezvous on the pod of index
// 0: torchrun's default.
const RendezvousPort = 29500

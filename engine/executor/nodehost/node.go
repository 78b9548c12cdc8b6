package nodehost

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
)

// node is this node's place in the job, from the variables srun sets.
type node struct {
	jobID string
	index int
	count int
	host  string
}

// nodeFromEnv reads SLURM_JOB_ID, SLURM_NODEID, SLURM_NNODES and
// SLURMD_NODENAME under srun, and in a Kubernetes pod the variables its
// manifest sets (rundir.EnvClusterJob and the others).
func nodeFromEnv(environ []string) (node, error) {
	env := envMap(environ)
	n := node{jobID: env["SLURM_JOB_ID"], host: env["SLURMD_NODENAME"]}
	index, count := env["SLURM_NODEID"], env["SLURM_NNODES"]
	if n.jobID == "" && env[rundir.EnvClusterJob] != "" {
		n.jobID, n.host = env[rundir.EnvClusterJob], env[rundir.EnvNodeName]
		index, count = env[rundir.EnvPodIndex], env[rundir.EnvNodes]
	}
	if n.jobID == "" || index == "" {
		return n, fmt.Errorf("SLURM_JOB_ID and SLURM_NODEID are not set: gpuflow node-host runs under srun, started by the job script gpuflow apply submits, or in a pod of the Job it submits to Kubernetes")
	}
	var err error
	if n.index, err = strconv.Atoi(index); err != nil {
		return n, fmt.Errorf("the node index %q is not a number", index)
	}
	if n.count, err = strconv.Atoi(count); err != nil || n.count < 1 {
		n.count = 1
	}
	if n.host == "" {
		n.host, _ = os.Hostname()
	}
	return n, nil
}

// stageEnv is the request's environment plus this node's place in the
// job and the rendezvous the job script exported.
func (n node) stageEnv(requested map[string]string, environ []string, jobDir string) map[string]string {
	out := map[string]string{}
	for k, v := range requested {
		out[k] = v
	}
	env := envMap(environ)
	for _, k := range []string{rundir.EnvRendezvous, rundir.EnvRendezvousID, rundir.EnvTorchrunArgs} {
		if v, ok := env[k]; ok {
			out[k] = v
		}
	}
	out[rundir.EnvNodeRank] = strconv.Itoa(n.index)
	out[rundir.EnvNodes] = strconv.Itoa(n.count)
	out[rundir.EnvJobDir] = jobDir
	out[rundir.EnvNCCLIDFile] = jobDir + "/" + rundir.NCCLIDFile
	return out
}

func envMap(environ []string) map[string]string {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

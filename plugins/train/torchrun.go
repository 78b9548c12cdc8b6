package train

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Torchrun is one node's launch of the trainer through PyTorch's own
// launcher (torch.distributed.run, the module behind the torchrun
// command), run by the given Python so that the launcher and the trainer
// share one interpreter and one PyTorch.
type Torchrun struct {
	// Python is the interpreter: python3, or GPUFLOW_PYTHON where set.
	Python string
	// Script is the trainer's entry point, Config the run's config.json.
	Script, Config string
	// Nodes and ProcsPerNode: one process per GPU.
	Nodes, ProcsPerNode int
	// Endpoint is the rendezvous host:port every node reaches (the first
	// node's address, e.g. "$MASTER_ADDR:29500" in an sbatch script), and
	// JobID names the rendezvous (e.g. "$SLURM_JOB_ID"). Both are unused on
	// one node, where torchrun picks a free local port itself.
	Endpoint, JobID string
}

// launchFailed is the diagnostic of a launcher that did not start (no
// interpreter at that path, or one that cannot run): the same for every
// stage the train plugin launches.
func launchFailed(err error) api.Diagnostics {
	return api.Diagnostics{{Severity: api.Error, Summary: "Cannot start torchrun",
		Detail: fmt.Sprintf("%v. The trainer runs under python3 with PyTorch, or the interpreter GPUFLOW_PYTHON names: install PyTorch there or point GPUFLOW_PYTHON at a Python that has it.", err)}}
}

// Argv is the command line: on one node a standalone rendezvous, on
// several a c10d rendezvous at Endpoint.
func (t Torchrun) Argv() []string {
	argv := []string{t.Python, "-m", "torch.distributed.run"}
	if t.Nodes <= 1 {
		argv = append(argv, "--standalone", "--nnodes=1")
	} else {
		argv = append(argv, "--nnodes="+strconv.Itoa(t.Nodes), "--rdzv-backend=c10d",
			"--rdzv-endpoint="+t.Endpoint, "--rdzv-id="+t.JobID)
	}
	return append(argv, "--nproc-per-node="+strconv.Itoa(t.ProcsPerNode), t.Script, "--config", t.Config)
}

// multicastOff are the settings every process keeps on hardware whose
// profile sets nvlink_multicast = false (GPUs of a shared virtual machine,
// whose host is not safe with NVLink SHARP multicast). The plan sets them
// too (engine/ncclenv); they are repeated here so that no launch on such
// hardware goes without them, whatever the plan held.
var multicastOff = map[string]string{
	"NCCL_NVLS_ENABLE":                 "0",
	"TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
	"NVSHMEM_DISABLE_NVLS":             "1",
}

// trainerEnv is the environment the trainer runs with on top of the
// inherited one: the plan's NCCL settings, the multicast guards where the
// hardware forbids multicast, and unbuffered output so metrics arrive as
// they happen.
func trainerEnv(planEnv map[string]string, hw hardwareConfig) map[string]string {
	env := maps.Clone(planEnv)
	if env == nil {
		env = map[string]string{}
	}
	if !hw.Multicast {
		maps.Copy(env, multicastOff)
	}
	env["PYTHONUNBUFFERED"] = "1"
	return env
}

// trainerDefaults are settings the trainer runs with unless the inherited
// environment or the plan names them already. Expandable segments let
// PyTorch's caching allocator grow a segment instead of keeping freed
// blocks of the wrong size: on the Llama-3.2-1B shape with full
// recomputation the default allocator held 15 GB beyond the allocated
// peak, expandable segments 6.7 GB, at the same speed
// (docs/benchmarks-log.md, "Run F again").
var trainerDefaults = map[string]string{
	"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
}

// environ lays env over base, sorted for a stable order; os/exec keeps
// the last value of a name given twice. trainerDefaults fill in what
// neither sets.
func environ(base []string, env map[string]string) []string {
	out := slices.Clone(base)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(trainerDefaults)) {
		if _, set := env[k]; !set && !inEnviron(base, k) {
			out = append(out, k+"="+trainerDefaults[k])
		}
	}
	return out
}

// inEnviron reports whether base ("NAME=value" entries) sets name.
func inEnviron(base []string, name string) bool {
	return slices.ContainsFunc(base, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == name
	})
}

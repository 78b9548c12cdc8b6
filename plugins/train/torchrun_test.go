package train

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/zclconf/go-cty/cty"
)

func TestTorchrunArgv(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		run  Torchrun
		want []string
	}{
		"one node": {
			run: Torchrun{Python: "python3", Script: "/r/trainer/train.py", Config: "/r/config.json", Nodes: 1, ProcsPerNode: 4},
			want: []string{"python3", "-m", "torch.distributed.run", "--standalone", "--nnodes=1", "--nproc-per-node=4",
				"/r/trainer/train.py", "--config", "/r/config.json"},
		},
		"four nodes through a c10d rendezvous": {
			run: Torchrun{Python: "/opt/venv/bin/python", Script: "t.py", Config: "c.json", Nodes: 4, ProcsPerNode: 8,
				Endpoint: "$MASTER_ADDR:29500", JobID: "$SLURM_JOB_ID"},
			want: []string{"/opt/venv/bin/python", "-m", "torch.distributed.run", "--nnodes=4", "--rdzv-backend=c10d",
				"--rdzv-endpoint=$MASTER_ADDR:29500", "--rdzv-id=$SLURM_JOB_ID", "--nproc-per-node=8", "t.py", "--config", "c.json"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, tc.run.Argv()); diff != "" {
				t.Errorf("Argv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrainerEnv(t *testing.T) {
	t.Parallel()
	plan := map[string]string{"NCCL_P2P_LEVEL": "NVL", "NCCL_IB_DISABLE": "0"}
	tests := map[string]struct {
		hardware hardwareConfig
		plan     map[string]string
		want     map[string]string
	}{
		"hardware without multicast gets the guards on top of the plan": {
			hardware: hardwareConfig{Name: "lab"}, plan: plan,
			want: map[string]string{"NCCL_P2P_LEVEL": "NVL", "NCCL_IB_DISABLE": "0", "NCCL_NVLS_ENABLE": "0",
				"TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1", "PYTHONUNBUFFERED": "1"},
		},
		"a guard overrides what the plan said": {
			hardware: hardwareConfig{Name: "h100-x1"}, plan: map[string]string{"NCCL_NVLS_ENABLE": "1"},
			want: map[string]string{"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1", "PYTHONUNBUFFERED": "1"},
		},
		"other machines get the plan's settings only": {
			hardware: hardwareConfig{Name: "h200-x4", Multicast: true}, plan: plan,
			want: map[string]string{"NCCL_P2P_LEVEL": "NVL", "NCCL_IB_DISABLE": "0", "PYTHONUNBUFFERED": "1"},
		},
		"no plan settings": {
			hardware: hardwareConfig{Name: "xe9780", Multicast: true},
			want:     map[string]string{"PYTHONUNBUFFERED": "1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, trainerEnv(tc.plan, tc.hardware)); diff != "" {
				t.Errorf("trainerEnv (-want +got):\n%s", diff)
			}
		})
	}
	if plan["NCCL_NVLS_ENABLE"] != "" {
		t.Error("trainerEnv changed the plan's map")
	}
}

func TestEnviron(t *testing.T) {
	t.Parallel()
	const alloc = "PYTORCH_CUDA_ALLOC_CONF"
	tests := map[string]struct {
		base []string
		env  map[string]string
		want []string
	}{
		"settings come last, so they win; the allocator default is added": {
			base: []string{"PATH=/bin", "NCCL_NVLS_ENABLE=1"},
			env:  map[string]string{"NCCL_NVLS_ENABLE": "0", "A": "1"},
			want: []string{"PATH=/bin", "NCCL_NVLS_ENABLE=1", "A=1", "NCCL_NVLS_ENABLE=0", alloc + "=expandable_segments:True"},
		},
		"the user's allocator setting is kept": {
			base: []string{alloc + "=backend:cudaMallocAsync"},
			want: []string{alloc + "=backend:cudaMallocAsync"},
		},
		"an empty allocator setting is the user's choice too": {
			base: []string{alloc + "="},
			want: []string{alloc + "="},
		},
		"the plan's allocator setting replaces the default": {
			env:  map[string]string{alloc: "expandable_segments:False"},
			want: []string{alloc + "=expandable_segments:False"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, environ(tc.base, tc.env)); diff != "" {
				t.Errorf("environ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrepareFollowsNVLinkMulticast: the launch keeps multicast off
// exactly when the hardware object says nvlink_multicast = false, whatever
// the hardware block is called.
func TestPrepareFollowsNVLinkMulticast(t *testing.T) {
	t.Parallel()
	for _, off := range []bool{true, false} {
		dir := t.TempDir()
		writeShard(t, filepath.Join(dir, "data", "train-00000"))
		b := defaultBody(cty.StringVal("data/train-00000"))
		b.hardware, b.multicastOff = "lab", off
		launch, diags := Prepare(request(dir, "pretrain", "p", b.value(), "run-1"), Options{Python: "python3"})
		if diags.HasErrors() {
			t.Fatalf("Prepare: %v", diags)
		}
		if got := launch.Env["NCCL_NVLS_ENABLE"] == "0" && launch.Env["NVSHMEM_DISABLE_NVLS"] == "1"; got != off {
			t.Errorf("nvlink_multicast = %v: multicast guards set %v, want %v (env %v)", !off, got, off, launch.Env)
		}
	}
}

// TestPrepareJoinsTheJobsRendezvous: on a node of a Slurm job, the stage
// starts its part of a multi-node torchrun through the rendezvous the job
// script exported, and keeps checkpoints where every node finds them.
func TestPrepareJoinsTheJobsRendezvous(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "data", "train-00000"))
	b := defaultBody(cty.StringVal("data/train-00000"))
	b.dp, b.global = 8, 16 // two nodes of four GPUs
	jobDir := filepath.Join(dir, ".gpuflow", "runs", "pretrain.big", "run-1", "job-42")
	req := request(dir, "pretrain", "big", b.value(), filepath.Join("run-1", "job-42", "node-1"))
	req.RunDir = filepath.Join(jobDir, "node-1")
	req.Env = map[string]string{api.EnvRendezvous: "n1:29500", api.EnvRendezvousID: "42", api.EnvJobDir: jobDir}
	launch, diags := Prepare(req, Options{Python: "python3"})
	if diags.HasErrors() {
		t.Fatalf("Prepare: %v", diags)
	}
	argv := strings.Join(launch.Torchrun.Argv(), " ")
	for _, want := range []string{"--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=n1:29500", "--rdzv-id=42", "--nproc-per-node=4"} {
		if !strings.Contains(argv, want) {
			t.Errorf("torchrun argv %q lacks %s", argv, want)
		}
	}
	wantRoot := filepath.Join(dir, ".gpuflow", "runs", "pretrain.big", "checkpoints")
	if !strings.HasPrefix(launch.Config.CheckpointDir, wantRoot) {
		t.Errorf("checkpoints in %s, want them under %s", launch.Config.CheckpointDir, wantRoot)
	}
}

// TestLaunchFailed: a launcher that cannot start names the error and what
// to install or set.
func TestLaunchFailed(t *testing.T) {
	d := launchFailed(errors.New(`exec: "python3": executable file not found in $PATH`))
	if len(d) != 1 || !d.HasErrors() {
		t.Fatalf("diagnostics: %+v", d)
	}
	for _, want := range []string{`"python3": executable file not found`, "GPUFLOW_PYTHON", "install PyTorch"} {
		if !strings.Contains(d[0].Detail, want) {
			t.Errorf("detail lacks %q: %s", want, d[0].Detail)
		}
	}
}

package train

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuflow/gpuflow/plugins/api"
)

func TestLatestCheckpoint(t *testing.T) {
	t.Parallel()
	complete := []string{gpuflowMarker, dcpMetadata}
	tests := map[string]struct {
		dirs  map[string][]string // folder -> files in it
		files []string            // plain files in root
		want  string              // folder name, "" for none
	}{
		"no root":                     {},
		"empty root":                  {dirs: map[string][]string{}},
		"highest complete step":       {dirs: map[string][]string{"step-00000100": complete, "step-00000300": complete, "step-00000200": complete}, want: "step-00000300"},
		"partial folder is not taken": {dirs: map[string][]string{"step-00000100": complete, "step-00000200.partial": complete}, want: "step-00000100"},
		"no marker is not complete":   {dirs: map[string][]string{"step-00000100": complete, "step-00000200": {dcpMetadata}}, want: "step-00000100"},
		"no DCP index is not complete": {
			dirs: map[string][]string{"step-00000100": {gpuflowMarker}},
		},
		"steps compare as numbers": {dirs: map[string][]string{"step-9": complete, "step-10": complete}, want: "step-10"},
		"other names are ignored":  {dirs: map[string][]string{"merged": complete, "step-x": complete, "step-00000005": complete}, files: []string{"step-00000009"}, want: "step-00000005"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "ckpt")
			if tc.dirs != nil {
				mkdir(t, root)
			}
			for d, files := range tc.dirs {
				mkdir(t, filepath.Join(root, d))
				for _, f := range files {
					touch(t, filepath.Join(root, d, f))
				}
			}
			for _, f := range tc.files {
				touch(t, filepath.Join(root, f))
			}
			got, ok, err := latestCheckpoint(root)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if ok {
					t.Errorf("found %v, want none", got)
				}
				return
			}
			if !ok || got.Path != filepath.Join(root, tc.want) {
				t.Errorf("latest = %v (found %v), want %s", got, ok, tc.want)
			}
		})
	}
}

const gpuflowMarker = checkpointMarker

func TestCheckpointKey(t *testing.T) {
	t.Parallel()
	base := runConfig{Stage: "pretrain.small", Type: "pretrain", Steps: 300, LR: 6e-4, Seed: 1, Data: []string{"/d/train"},
		Layout: api.Layout{DP: 4, MicroBatch: 16, GlobalBatch: 64}}
	same := base
	same.CheckpointEvery, same.CheckpointDir, same.ResumeFrom, same.Compile, same.Checkpoint, same.KeepCheckpoints = 50, "/elsewhere", "/r", true, true, 9
	same.ValidData, same.EvalEvery, same.EvalBatches, same.TensorBoardDir = []string{"/d/valid"}, 25, 4, "/run/tensorboard"
	same.Params, same.AdapterParams, same.FLOPsPerToken = 1e6, 1e3, 6e6
	changed := map[string]func(*runConfig){
		"lr":     func(c *runConfig) { c.LR = 1e-3 },
		"steps":  func(c *runConfig) { c.Steps = 600 },
		"layout": func(c *runConfig) { c.Layout.DP = 2 },
		"data":   func(c *runConfig) { c.Data = []string{"/d/other"} },
		"seed":   func(c *runConfig) { c.Seed = 2 },
	}
	if checkpointKey(base) != checkpointKey(same) {
		t.Error("where and how often checkpoints are written, what the run validates on and logs, or the counts, changed the key")
	}
	for name, change := range changed {
		c := base
		c.Data = append([]string(nil), base.Data...)
		change(&c)
		if checkpointKey(c) == checkpointKey(base) {
			t.Errorf("changing %s kept the key", name)
		}
	}
}

func TestCheckpointRootIsSharedByTheStagesRuns(t *testing.T) {
	t.Parallel()
	c := runConfig{Stage: "pretrain.small", Steps: 3}
	stage := "/w/.gpuflow/runs/pretrain.small"
	runs := map[string]struct {
		runDir string
		env    map[string]string
	}{
		"local run 1":        {runDir: stage + "/run-1"},
		"local run 2":        {runDir: stage + "/run-2"},
		"slurm node 0":       {runDir: stage + "/run-3/job-7/node-0", env: map[string]string{api.EnvJobDir: stage + "/run-3/job-7"}},
		"slurm node 1":       {runDir: stage + "/run-3/job-7/node-1", env: map[string]string{api.EnvJobDir: stage + "/run-3/job-7"}},
		"slurm resubmission": {runDir: stage + "/run-4/job-9/node-0", env: map[string]string{api.EnvJobDir: stage + "/run-4/job-9"}},
	}
	want := filepath.Join(stage, "checkpoints", checkpointKey(c))
	for name, r := range runs {
		got, err := checkpointRoot(stageDir(r.runDir, r.env), c)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: checkpoint root %s, want %s", name, got, want)
		}
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
}

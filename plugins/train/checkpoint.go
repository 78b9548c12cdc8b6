package train

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// A checkpoint folder is complete when the trainer has renamed it from
// step-N.partial to step-N and written its marker, which it does last.
// DCP's own .metadata is checked too, so a folder copied by hand without
// its index is not taken for a checkpoint.
const (
	checkpointMarker = "gpuflow.json"
	dcpMetadata      = ".metadata"
)

var checkpointName = regexp.MustCompile(`^step-(\d+)$`)

// checkpoint is one complete checkpoint folder.
type checkpoint struct {
	Step int64
	Path string
}

// latestCheckpoint finds the complete checkpoint of the highest step under
// root. A missing root has none.
func latestCheckpoint(root string) (checkpoint, bool, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return checkpoint{}, false, nil
	}
	if err != nil {
		return checkpoint{}, false, err
	}
	var best checkpoint
	found := false
	for _, e := range entries {
		m := checkpointName.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		step, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if !isComplete(dir) || (found && step <= best.Step) {
			continue
		}
		best, found = checkpoint{Step: step, Path: dir}, true
	}
	return best, found, nil
}

func isComplete(dir string) bool {
	for _, name := range []string{checkpointMarker, dcpMetadata} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// checkpointKey names a training configuration: the same model, layout,
// data, schedule, seed and budget resume each other's checkpoints; any
// change starts afresh in a folder of its own. Where checkpoints go and
// how often, what is exported at the end, and what the run validates on
// and logs do not change the key, nor do the counts, which follow from the
// model and adapters.
func checkpointKey(c runConfig) string {
	c.ResumeFrom, c.CheckpointDir, c.CheckpointEvery, c.Checkpoint, c.KeepCheckpoints, c.Compile = "", "", 0, false, 0, false
	c.ExportHF, c.ExportPEFT, c.ExportTokenizer = "", "", ""
	c.ValidData, c.EvalEvery, c.EvalBatches, c.TensorBoardDir = nil, 0, 0, ""
	c.Params, c.AdapterParams, c.FLOPsPerToken = 0, 0, 0
	b, _ := json.Marshal(c) // a struct of plain fields always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// checkpointRoot is where a stage's checkpoints go: in the stage's folder
// beside its runs (.gpuflow/runs/STAGE/checkpoints/KEY), so that every run
// of the stage, local or on any node of a cluster job, finds them.
func checkpointRoot(stageDir string, c runConfig) (string, error) {
	abs, err := filepath.Abs(stageDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(abs, "checkpoints", checkpointKey(c)), nil
}

package rundir

import (
	"path/filepath"
	"strconv"
)

// File names in a run directory and a node's directory.
const (
	RequestFile = "request.json"
	EventsFile  = "events.jsonl"
	ResultFile  = "result.json"
)

// JobDir is where one job of the run keeps its nodes' files.
func JobDir(runDir, jobID string) string {
	return filepath.Join(runDir, "job-"+jobID)
}

// NodeDir is node's directory in a job's directory; node counts from 0 in
// the job's node order (Slurm's SLURM_NODEID).
func NodeDir(jobDir string, node int) string {
	return filepath.Join(jobDir, "node-"+strconv.Itoa(node))
}

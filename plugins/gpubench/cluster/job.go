package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Job is this node's place in a multi-node job and the files the nodes
// share.
type Job struct {
	// NodeRank is this node's index, from 0; Nodes how many the job has.
	NodeRank, Nodes int
	// Dir is the job's shared directory; IDFile where node 0 publishes
	// NCCL's unique id.
	Dir, IDFile string
	// Wait bounds every wait for another node's file; Poll is how often
	// the file is looked for.
	Wait, Poll time.Duration
}

// Defaults for Job.Wait and Job.Poll.
const (
	DefaultWait = 5 * time.Minute
	DefaultPoll = 100 * time.Millisecond
)

// FromEnv reads the job from a stage request's environment. It returns nil
// (a single-node run) when GPUFLOW_NODES is absent or 1.
func FromEnv(env map[string]string) (*Job, error) {
	nodesText, ok := env[api.EnvNodes]
	if !ok {
		return nil, nil
	}
	nodes, err := strconv.Atoi(nodesText)
	if err != nil || nodes < 1 {
		return nil, fmt.Errorf("%s=%q is not a positive node count", api.EnvNodes, nodesText)
	}
	if nodes == 1 {
		return nil, nil
	}
	rank, err := strconv.Atoi(env[api.EnvNodeRank])
	if err != nil || rank < 0 || rank >= nodes {
		return nil, fmt.Errorf("%s=%q is not a node index below %s=%d", api.EnvNodeRank, env[api.EnvNodeRank], api.EnvNodes, nodes)
	}
	j := &Job{NodeRank: rank, Nodes: nodes, Dir: env[api.EnvJobDir], IDFile: env[api.EnvNCCLIDFile], Wait: DefaultWait, Poll: DefaultPoll}
	if j.Dir == "" {
		return nil, fmt.Errorf("a job of %d nodes needs %s, the directory the nodes share", nodes, api.EnvJobDir)
	}
	if j.IDFile == "" {
		j.IDFile = filepath.Join(j.Dir, "nccl-id")
	}
	return j, nil
}

// writeAtomic writes data to a temporary file beside path, syncs it and
// renames it into place, so that a reader on another node sees the whole
// file or none.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return errors.Join(err, os.Remove(f.Name()))
	}
	return nil
}

// await polls for path until it exists, the job's wait passes or ctx ends,
// and returns its content. what names the file in the timeout error.
func (j *Job) await(ctx context.Context, path, what string) ([]byte, error) {
	deadline := time.Now().Add(j.Wait)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			return data, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("node %d: reading %s: %w", j.NodeRank, what, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("node %d of %d waited %s for %s at %s; it never appeared (did that node start, and do the nodes share %s?)",
				j.NodeRank, j.Nodes, j.Wait, what, path, filepath.Dir(path))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("node %d: waiting for %s at %s: %w", j.NodeRank, what, path, context.Cause(ctx))
		case <-time.After(j.Poll):
		}
	}
}

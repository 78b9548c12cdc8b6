package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
)

// NodeTimes is one node's per-rank times for every collective it ran: the
// content of GPUFLOW_JOB_DIR/nccl-times-node-N.json.
type NodeTimes struct {
	Node        int               `json:"node"`
	Collectives []CollectiveTimes `json:"collectives"`
}

// CollectiveTimes is one collective at one size on every GPU of a node.
type CollectiveTimes struct {
	Op      string `json:"op"`
	Bytes   int64  `json:"bytes"`
	InPlace bool   `json:"in_place"`
	// RankTimesS is each local GPU's time of one collective, by GPU index.
	RankTimesS []float64 `json:"rank_times_s"`
}

// TimesFile is where node n's times go.
func (j *Job) TimesFile(n int) string {
	return filepath.Join(j.Dir, fmt.Sprintf("nccl-times-node-%d.json", n))
}

// WriteTimes publishes this node's times.
func (j *Job) WriteTimes(t NodeTimes) error {
	t.Node = j.NodeRank
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(j.TimesFile(j.NodeRank), data); err != nil {
		return fmt.Errorf("node %d: writing its NCCL times: %w", j.NodeRank, err)
	}
	return nil
}

// AwaitTimes waits for every node's times (node 0's job) and returns them
// by node.
func (j *Job) AwaitTimes(ctx context.Context) ([]NodeTimes, error) {
	out := make([]NodeTimes, j.Nodes)
	for n := range j.Nodes {
		path := j.TimesFile(n)
		data, err := j.await(ctx, path, fmt.Sprintf("node %d's NCCL times", n))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &out[n]); err != nil {
			return nil, fmt.Errorf("node %d's NCCL times at %s: %w", n, path, err)
		}
	}
	return out, nil
}

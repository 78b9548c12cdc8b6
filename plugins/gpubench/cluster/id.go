package cluster

import (
	"context"
	"fmt"
)

// IDBytes is the size of NCCL's ncclUniqueId.
const IDBytes = 128

// ShareID hands NCCL's unique id from node 0 to the others: node 0 passes
// the id it made and publishes it at IDFile; every other node passes nil
// and waits for node 0's. Both get the id every rank must use.
func (j *Job) ShareID(ctx context.Context, id []byte) ([]byte, error) {
	if j.NodeRank == 0 {
		if len(id) != IDBytes {
			return nil, fmt.Errorf("node 0 made an NCCL id of %d bytes, not %d", len(id), IDBytes)
		}
		if err := writeAtomic(j.IDFile, id); err != nil {
			return nil, fmt.Errorf("node 0: publishing the NCCL id: %w", err)
		}
		return id, nil
	}
	got, err := j.await(ctx, j.IDFile, "node 0's NCCL id")
	if err != nil {
		return nil, err
	}
	if len(got) != IDBytes {
		return nil, fmt.Errorf("node %d: the NCCL id at %s holds %d bytes, not %d (a file of an older job?)", j.NodeRank, j.IDFile, len(got), IDBytes)
	}
	return got, nil
}

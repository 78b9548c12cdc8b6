package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFromEnv(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		env     map[string]string
		want    *Job
		wantErr string
	}{
		"no job":   {env: map[string]string{}},
		"one node": {env: map[string]string{"GPUFLOW_NODES": "1", "GPUFLOW_NODE_RANK": "0"}},
		"second of two": {
			env:  map[string]string{"GPUFLOW_NODES": "2", "GPUFLOW_NODE_RANK": "1", "GPUFLOW_JOB_DIR": "/j", "GPUFLOW_NCCL_ID_FILE": "/j/id"},
			want: &Job{NodeRank: 1, Nodes: 2, Dir: "/j", IDFile: "/j/id", Wait: DefaultWait, Poll: DefaultPoll},
		},
		"id file defaults into the job dir": {
			env:  map[string]string{"GPUFLOW_NODES": "3", "GPUFLOW_NODE_RANK": "0", "GPUFLOW_JOB_DIR": "/j"},
			want: &Job{NodeRank: 0, Nodes: 3, Dir: "/j", IDFile: "/j/nccl-id", Wait: DefaultWait, Poll: DefaultPoll},
		},
		"bad count":       {env: map[string]string{"GPUFLOW_NODES": "two"}, wantErr: `GPUFLOW_NODES="two"`},
		"rank past nodes": {env: map[string]string{"GPUFLOW_NODES": "2", "GPUFLOW_NODE_RANK": "2", "GPUFLOW_JOB_DIR": "/j"}, wantErr: "GPUFLOW_NODE_RANK=\"2\""},
		"no job dir":      {env: map[string]string{"GPUFLOW_NODES": "2", "GPUFLOW_NODE_RANK": "0"}, wantErr: "needs GPUFLOW_JOB_DIR"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := FromEnv(tc.env)
			if (tc.wantErr == "") != (err == nil) || !strings.Contains(errText(err), tc.wantErr) {
				t.Fatalf("error %q, want one containing %q", errText(err), tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("job (-want +got):\n%s", diff)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func testJob(dir string, rank int) *Job {
	return &Job{NodeRank: rank, Nodes: 2, Dir: dir, IDFile: filepath.Join(dir, "nccl-id"), Wait: 2 * time.Second, Poll: 5 * time.Millisecond}
}

func TestShareIDReachesTheOtherNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := bytes.Repeat([]byte{0xab, 0x01}, IDBytes/2)
	got := make(chan []byte)
	go func() {
		b, err := testJob(dir, 1).ShareID(context.Background(), nil)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	time.Sleep(20 * time.Millisecond) // node 1 is polling before node 0 publishes
	if _, err := testJob(dir, 0).ShareID(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(id, <-got); diff != "" {
		t.Errorf("node 1's id (-want +got):\n%s", diff)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".nccl-id.*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestShareIDErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		rank    int
		id      []byte
		file    []byte // written at IDFile first, when set
		wantErr string
	}{
		"node 0 with a short id": {rank: 0, id: []byte{1}, wantErr: "NCCL id of 1 bytes, not 128"},
		"id never published":     {rank: 1, wantErr: "node 1 of 2 waited 50ms for node 0's NCCL id at"},
		"truncated id file":      {rank: 1, file: []byte("short"), wantErr: "holds 5 bytes, not 128"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			j := testJob(t.TempDir(), tc.rank)
			j.Wait = 50 * time.Millisecond
			if tc.file != nil {
				if err := os.WriteFile(j.IDFile, tc.file, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := j.ShareID(context.Background(), tc.id)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestShareIDStopsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := testJob(t.TempDir(), 1).ShareID(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("error %v, want the context's", err)
	}
}

func TestTimesRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := []NodeTimes{
		{Node: 0, Collectives: []CollectiveTimes{{Op: "all_reduce", Bytes: 1 << 20, RankTimesS: []float64{1e-4, 1.1e-4}}}},
		{Node: 1, Collectives: []CollectiveTimes{{Op: "all_reduce", Bytes: 1 << 20, RankTimesS: []float64{1.2e-4, 3e-4}}}},
	}
	for n := range want {
		if err := testJob(dir, n).WriteTimes(NodeTimes{Collectives: want[n].Collectives}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testJob(dir, 0).AwaitTimes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("times (-want +got):\n%s", diff)
	}
}

func TestAwaitTimesNamesTheMissingNode(t *testing.T) {
	t.Parallel()
	j := testJob(t.TempDir(), 0)
	j.Wait = 30 * time.Millisecond
	if err := j.WriteTimes(NodeTimes{}); err != nil {
		t.Fatal(err)
	}
	_, err := j.AwaitTimes(context.Background())
	if err == nil || !strings.Contains(err.Error(), "node 1's NCCL times") || !strings.Contains(err.Error(), "nccl-times-node-1.json") {
		t.Errorf("error %v, want one naming node 1 and its file", err)
	}
}

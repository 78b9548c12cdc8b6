package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpuflow/gpuflow/plugins/dataprep/shard"
)

// ManifestName is the manifest's file name in the output folder.
const ManifestName = "manifest.json"

const manifestVersion = 1

// Manifest records the finished shard groups of an output folder.
type Manifest struct {
	FormatVersion int    `json:"format_version"`
	Fingerprint   string `json:"fingerprint"`
	// Complete is set once every input record is in a recorded group.
	Complete bool    `json:"complete"`
	Groups   []Group `json:"groups"`
}

// Group is one finished shard group.
type Group struct {
	Index int `json:"index"`
	// EndRecord is the number of input records consumed up to the end of
	// this group, skipped ones included: where a resumed run starts.
	EndRecord int64                 `json:"end_record"`
	Skipped   int64                 `json:"skipped"`
	Splits    map[string]SplitShard `json:"splits,omitempty"`
}

// SplitShard is one split's shard of a group; paths are relative to the
// output folder.
type SplitShard struct {
	Documents int64  `json:"documents"`
	Tokens    int64  `json:"tokens"`
	Bytes     int64  `json:"bytes"`
	Megatron  string `json:"megatron,omitempty"`
	Npy       string `json:"npy,omitempty"`
	// TrainedTokens, MegatronMask and NpyMask are set for chat records:
	// the tokens the loss is computed on, and the loss masks written
	// beside the token shards.
	TrainedTokens int64  `json:"trained_tokens,omitempty"`
	MegatronMask  string `json:"megatron_mask,omitempty"`
	NpyMask       string `json:"npy_mask,omitempty"`
}

func readManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var head struct {
		FormatVersion int `json:"format_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if head.FormatVersion != manifestVersion {
		return nil, fmt.Errorf("%s has format_version %d; this gpuflow reads version %d: use the gpuflow that wrote it, or remove the folder", path, head.FormatVersion, manifestVersion)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

func (m *Manifest) write(dir string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return shard.WriteFile(filepath.Join(dir, ManifestName), append(data, '\n'))
}

// files lists the files of every recorded group, relative to the folder.
func (m *Manifest) files() []string {
	var out []string
	for _, g := range m.Groups {
		for _, s := range g.Splits {
			if s.Megatron != "" {
				out = append(out, s.Megatron+".bin", s.Megatron+".idx")
			}
			if s.Npy != "" {
				out = append(out, s.Npy)
			}
			if s.MegatronMask != "" {
				out = append(out, s.MegatronMask+".bin", s.MegatronMask+".idx")
			}
			if s.NpyMask != "" {
				out = append(out, s.NpyMask)
			}
		}
	}
	return out
}

func (m *Manifest) endRecord() int64 {
	if len(m.Groups) == 0 {
		return 0
	}
	return m.Groups[len(m.Groups)-1].EndRecord
}

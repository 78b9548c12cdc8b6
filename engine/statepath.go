package engine

import (
	"path/filepath"
	"strings"
)

// DataDir is the working directory's gpuflow folder.
const DataDir = ".gpuflow"

// DefaultStatePath is where a workload's state lives unless -state says
// otherwise: .gpuflow/state/<slug>.json, the slug made from the workload
// path so that two workloads in one directory keep separate state.
func DefaultStatePath(workload string) string {
	return filepath.Join(DataDir, "state", workloadSlug(workload)+".json")
}

// DefaultLockPath is the lock guarding a workload's state.
func DefaultLockPath(statePath string) string {
	return strings.TrimSuffix(statePath, ".json") + ".lock"
}

func workloadSlug(workload string) string {
	clean := filepath.ToSlash(filepath.Clean(workload))
	clean = strings.TrimSuffix(clean, ".hcl")
	var b strings.Builder
	for _, r := range clean {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		return "workload"
	}
	return s
}

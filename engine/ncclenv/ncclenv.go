package ncclenv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpuflow/gpuflow/hardware"
)

// Setting is one environment variable for the processes of a stage.
type Setting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
	// Source says where the value came from: SourceDerived,
	// SourceOverride or SourcePinned.
	Source string `json:"source"`
	// Pinned settings keep shared hardware safe; Merge refuses to
	// override them.
	Pinned bool `json:"pinned,omitempty"`
}

// Sources of a Setting's value.
const (
	SourceDerived  = "derived"
	SourceOverride = "override"
	// SourcePinned marks a pinned setting whose override was refused.
	SourcePinned = "pinned"
)

// rule derives at most one setting from a profile.
type rule func(hw *hardware.Profile) (Setting, bool)

// rules run in this order, which is also the order of Derive's result.
var rules = []rule{
	p2pLevel, mnnvl, nvlsOff, torchMulticastOff, nvshmemNVLSOff,
	ibEnable, ibHCA, gidIndex, gdrLevel, socketIfname, ibDisableForSockets,
	ringAlgorithm, debugLevel,
}

// Derive returns the NCCL environment for hw.
func Derive(hw *hardware.Profile) []Setting {
	if hw == nil {
		return nil
	}
	var out []Setting
	for _, r := range rules {
		if s, ok := r(hw); ok {
			s.Source = SourceDerived
			out = append(out, s)
		}
	}
	return out
}

// Merge applies a workload's overrides to derived settings. An override
// wins and is marked SourceOverride, except on a pinned setting, which
// keeps its value, is marked SourcePinned and says in its reason what
// was refused. Overrides of variables not derived are appended, sorted by
// name.
func Merge(derived []Setting, overrides map[string]string) []Setting {
	out := make([]Setting, 0, len(derived)+len(overrides))
	seen := map[string]bool{}
	for _, s := range derived {
		seen[s.Name] = true
		v, ok := overrides[s.Name]
		switch {
		case !ok || v == s.Value:
		case s.Pinned:
			s.Source = SourcePinned
			s.Reason += fmt.Sprintf(" The workload's %s=%s was refused.", s.Name, v)
		default:
			s.Reason = fmt.Sprintf("Set by the workload (derived %s would be %q: %s)", s.Name, s.Value, s.Reason)
			s.Value, s.Source = v, SourceOverride
		}
		out = append(out, s)
	}
	extra := make([]string, 0, len(overrides))
	for name := range overrides {
		if !seen[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		out = append(out, Setting{Name: name, Value: overrides[name], Reason: "Set by the workload.", Source: SourceOverride})
	}
	return out
}

// Environ renders settings as NAME=VALUE pairs for a process environment.
func Environ(settings []Setting) []string {
	env := make([]string, len(settings))
	for i, s := range settings {
		env[i] = s.Name + "=" + s.Value
	}
	return env
}

func hasNVLink(hw *hardware.Profile) bool {
	return strings.HasPrefix(hw.Interconnect.Kind, "nvlink") && hw.Interconnect.DomainSize >= 2
}

func multiGPU(hw *hardware.Profile) bool { return hw.TotalGPUs() > 1 }

func rdma(hw *hardware.Profile) bool {
	return hw.Network.Kind == hardware.NetworkIB || hw.Network.Kind == hardware.NetworkRoCE
}

func networked(hw *hardware.Profile) bool {
	return hw.Nodes > 1 && hw.Network.Kind != hardware.NetworkNone && hw.Network.Kind != ""
}

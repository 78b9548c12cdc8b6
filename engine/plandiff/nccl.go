package plandiff

import "github.com/gpuflow/gpuflow/engine/ncclenv"

// NCCLChange is one NCCL environment variable that is set, unset or set
// differently. Source and Reason are the new side's (the old side's for a
// variable no longer set).
type NCCLChange struct {
	Name   string  `json:"name"`
	Old    *string `json:"old,omitempty"`
	New    *string `json:"new,omitempty"`
	Source string  `json:"source"`
	Reason string  `json:"reason"`
}

// compareNCCL lists the variables that differ: the new side's order
// first, then those only the old side set.
func compareNCCL(old, new []ncclenv.Setting) []NCCLChange {
	before := map[string]ncclenv.Setting{}
	for _, s := range old {
		before[s.Name] = s
	}
	seen := map[string]bool{}
	var out []NCCLChange
	for _, s := range new {
		seen[s.Name] = true
		c := NCCLChange{Name: s.Name, New: &s.Value, Source: s.Source, Reason: s.Reason}
		if o, ok := before[s.Name]; ok {
			if o.Value == s.Value {
				continue
			}
			c.Old = &o.Value
		}
		out = append(out, c)
	}
	for _, s := range old {
		if !seen[s.Name] {
			out = append(out, NCCLChange{Name: s.Name, Old: &s.Value, Source: s.Source, Reason: s.Reason})
		}
	}
	return out
}

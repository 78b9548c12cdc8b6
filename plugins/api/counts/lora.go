package counts

import (
	"fmt"
	"strings"
)

var aliases = map[string]string{
	"q_proj": "q", "k_proj": "k", "v_proj": "v", "o_proj": "o",
	"gate_proj": "gate", "up_proj": "up", "down_proj": "down",
}

// TargetName is a LoRA target's short name: q, k, v, o, gate, up, down
// (Hugging Face's q_proj ... down_proj are accepted).
func TargetName(t string) string {
	name := strings.ToLower(t)
	if a, ok := aliases[name]; ok {
		return a
	}
	return name
}

// ExpandTargets spells out "all-linear" as every linear layer of s: a
// GELU (GPT-2) MLP has no gate.
func ExpandTargets(s Shape, ts []string) []string {
	for _, t := range ts {
		if t == "all-linear" || t == "all_linear" {
			if s.GELU {
				return []string{"q", "k", "v", "o", "up", "down"}
			}
			return []string{"q", "k", "v", "o", "gate", "up", "down"}
		}
	}
	return ts
}

// AdaptersPerLayer counts one layer's adapter parameters, rank*(in+out)
// per adapted matrix, each counted once however often it is named.
func AdaptersPerLayer(s Shape, rank int, targets []string) (float64, error) {
	if rank < 1 {
		return 0, fmt.Errorf("LoRA rank is %d; it must be 1 or more", rank)
	}
	h := float64(s.Hidden)
	q := float64(s.Heads * s.HeadDim())
	kv := float64(s.KVHeads * s.HeadDim())
	ffn := float64(s.FFNHidden)
	dims := map[string]float64{"q": h + q, "k": h + kv, "v": h + kv, "o": q + h, "up": h + ffn, "down": ffn + h}
	if !s.GELU {
		dims["gate"] = h + ffn
	}
	seen := map[string]bool{}
	var sum float64
	for _, t := range ExpandTargets(s, targets) {
		name := TargetName(t)
		d, ok := dims[name]
		if !ok {
			return 0, fmt.Errorf("LoRA target %q is not a linear layer of this model; use q, k, v, o, up, down%s or all-linear", t, gateHint(s))
		}
		if !seen[name] {
			seen[name] = true
			sum += d
		}
	}
	if len(seen) == 0 {
		return 0, fmt.Errorf("LoRA has no targets; name the adapted layers (q, k, v, o, ...) or all-linear")
	}
	return float64(rank) * sum, nil
}

func gateHint(s Shape) string {
	if s.GELU {
		return ""
	}
	return ", gate"
}

package fake

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// config is a decoded fake stage body; unknown or absent values are zero
// (behaviour: succeed).
type config struct {
	behaviour string
	duration  time.Duration
	outputs   map[string]string
	gpus      int
	steps     int
}

// body is a fake stage body as written.
type body struct {
	Behavior      string            `cty:"behavior"`
	Duration      string            `cty:"duration"`
	Outputs       map[string]string `cty:"outputs"`
	GPUs          int               `cty:"gpus"`
	ProgressSteps int               `cty:"progress_steps"`
}

func decodeConfig(v cty.Value) (config, api.Diagnostics) {
	b := body{Behavior: Succeed}
	diags := sdk.Decode(v, &b)
	cfg := config{behaviour: b.Behavior, outputs: b.Outputs}
	if !slices.Contains(behaviours, cfg.behaviour) {
		diags = append(diags, invalid("behavior", fmt.Sprintf("%q is not a behavior; use one of %s.", cfg.behaviour, strings.Join(behaviours, ", "))))
	}
	if b.Duration != "" {
		dur, err := time.ParseDuration(b.Duration)
		if err != nil || dur < 0 {
			diags = append(diags, invalid("duration", fmt.Sprintf(`%q is not a duration like "200ms".`, b.Duration)))
		}
		cfg.duration = dur
	}
	var d api.Diagnostics
	cfg.gpus, d = count("gpus", b.GPUs)
	diags = append(diags, d...)
	cfg.steps, d = count("progress_steps", b.ProgressSteps)
	return cfg, append(diags, d...)
}

// count checks a whole number attribute: from 0 to 2^20.
func count(name string, n int) (int, api.Diagnostics) {
	if n < 0 || n > 1<<20 {
		return 0, api.Diagnostics{invalid(name, fmt.Sprintf("%s must be a whole number from 0, not %d.", name, n))}
	}
	return n, nil
}

func invalid(name, detail string) api.Diagnostic {
	return api.Diagnostic{Severity: api.Error, Summary: "Invalid " + name, Detail: detail, Path: cty.GetAttrPath(name)}
}

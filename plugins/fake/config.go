package fake

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
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

func decodeConfig(v cty.Value) (config, api.Diagnostics) {
	cfg := config{behaviour: Succeed}
	var diags api.Diagnostics
	if v.IsNull() || !v.IsKnown() {
		return cfg, nil
	}
	if b := attr(v, "behavior"); known(b) {
		cfg.behaviour = b.AsString()
		if !slices.Contains(behaviours, cfg.behaviour) {
			diags = append(diags, invalid("behavior", fmt.Sprintf("%q is not a behavior; use one of %s.", cfg.behaviour, strings.Join(behaviours, ", "))))
		}
	}
	if d := attr(v, "duration"); known(d) {
		dur, err := time.ParseDuration(d.AsString())
		if err != nil || dur < 0 {
			diags = append(diags, invalid("duration", fmt.Sprintf(`%q is not a duration like "200ms".`, d.AsString())))
		}
		cfg.duration = dur
	}
	if o := attr(v, "outputs"); known(o) {
		cfg.outputs = map[string]string{}
		for k, val := range o.AsValueMap() {
			if known(val) {
				cfg.outputs[k] = val.AsString()
			}
		}
	}
	var d api.Diagnostics
	cfg.gpus, d = count(v, "gpus")
	diags = append(diags, d...)
	cfg.steps, d = count(v, "progress_steps")
	diags = append(diags, d...)
	return cfg, diags
}

func known(v cty.Value) bool { return v.IsKnown() && !v.IsNull() }

// attr reads an attribute that a config decoded without it lacks as null.
func attr(obj cty.Value, name string) cty.Value {
	if !obj.Type().IsObjectType() || !obj.Type().HasAttribute(name) {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return obj.GetAttr(name)
}

// count decodes a whole, non-negative number attribute.
func count(obj cty.Value, name string) (int, api.Diagnostics) {
	v := attr(obj, name)
	if !known(v) {
		return 0, nil
	}
	n, acc := v.AsBigFloat().Int64()
	if acc != big.Exact || n < 0 || n > 1<<20 {
		return 0, api.Diagnostics{invalid(name, fmt.Sprintf("%s must be a whole number from 0, not %s.", name, v.AsBigFloat().String()))}
	}
	return int(n), nil
}

func invalid(name, detail string) api.Diagnostic {
	return api.Diagnostic{Severity: api.Error, Summary: "Invalid " + name, Detail: detail, Path: cty.GetAttrPath(name)}
}

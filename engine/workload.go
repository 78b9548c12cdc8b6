package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// Workload is a loaded workload with its hardware, models and layouts
// resolved.
type Workload struct {
	Path     string
	Config   *dsl.Config
	Hardware map[string]*hardware.Profile
	Models   map[string]model.Shape
	Layouts  map[string]*resolvedLayout
}

// LoadWorkload reads and resolves the workload at path. The Workload is
// returned even with errors so that diagnostics can show source lines.
func LoadWorkload(path string, in dsl.Inputs) (*Workload, hcl.Diagnostics) {
	cfg, diags := dsl.Load(path, in)
	w := &Workload{Path: path, Config: cfg, Hardware: map[string]*hardware.Profile{},
		Models: map[string]model.Shape{}, Layouts: map[string]*resolvedLayout{}}
	if !cfg.Evaluated {
		return w, diags
	}
	ctx := cfg.EvalContext()
	for name, h := range cfg.Hardware {
		if rdiags := cfg.CheckReferences(dsl.BodyTraversals(h.Body)); rdiags.HasErrors() {
			diags = append(diags, rdiags...)
			continue
		}
		p, hdiags := hardware.Decode(name, h.Body, ctx)
		diags = append(diags, hdiags...)
		if p != nil {
			w.Hardware[name] = p
		}
	}
	for name, m := range cfg.Models {
		if !m.Decoded {
			continue
		}
		s, mdiags := resolveModel(m, cfg.Dir)
		diags = append(diags, mdiags...)
		w.Models[name] = s
	}
	for name, l := range cfg.Layouts {
		if !l.Decoded {
			continue
		}
		r, ldiags := resolveLayout(l)
		diags = append(diags, ldiags...)
		w.Layouts[name] = r
	}
	return w, diags
}

// ConfigHash identifies the workload's source and variable values, so a
// saved plan can tell whether it still matches what is on disk.
func (w *Workload) ConfigHash() string {
	h := sha256.New()
	for _, name := range w.Config.Files {
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(w.Config.Sources[name])
		h.Write([]byte{0})
	}
	for _, name := range slices.Sorted(maps.Keys(w.Config.Variables)) {
		v := w.Config.Variables[name]
		b, _ := ctyjson.Marshal(v.Value, v.Value.Type()) // variable values are always known
		h.Write([]byte(name))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// VariableValues returns each variable's value as JSON for the plan file.
func (w *Workload) VariableValues() map[string]PlanVariable {
	out := map[string]PlanVariable{}
	for name, v := range w.Config.Variables {
		b, err := ctyjson.Marshal(v.Value, v.Value.Type())
		if err != nil {
			continue
		}
		out[name] = PlanVariable{Value: json.RawMessage(b), Source: v.ValueSource, Sensitive: v.Sensitive}
	}
	return out
}

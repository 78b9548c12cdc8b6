package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuflow/gpuflow/engine/state"
)

// decideAction compares the stage's inputs with what state recorded.
func (p *planner) decideAction(n *stageNode, sp *StagePlan, config cty.Value, files []inputFile) {
	if config.IsWhollyKnown() {
		sp.InputHash = InputHash(sp.Plugin, sp.Type, config, files)
	}
	var prior *state.Stage
	if p.opts.State != nil {
		prior = p.opts.State.Stages[sp.Address]
	}
	forced := false
	for _, r := range p.opts.Replace {
		forced = forced || normalizeAddr(r) == sp.Address
	}
	switch {
	case prior == nil:
		sp.Action = ActionCreate
		if forced {
			sp.Reasons = append(sp.Reasons, "-replace requested")
		}
	case forced:
		sp.Action, sp.Reasons = ActionReplace, []string{"-replace requested"}
	case prior.Status != state.StatusSucceeded:
		sp.Action, sp.Reasons = ActionReplace, []string{fmt.Sprintf("last apply left it %s", prior.Status)}
	case sp.InputHash == "":
		sp.Action, sp.Reasons = ActionReplace, p.upstreamReasons(n)
	case prior.InputHash != sp.InputHash:
		sp.Action, sp.Reasons = ActionReplace, changeReasons(prior, sp, files)
	default:
		sp.Action = ActionNoOp
	}
}

// upstreamReasons explains inputs that are known only after apply.
func (p *planner) upstreamReasons(n *stageNode) []string {
	var out []string
	for _, up := range slices.Sorted(maps.Keys(n.upstream)) {
		if sp := p.plans[up]; sp != nil && sp.Action != ActionNoOp {
			out = append(out, fmt.Sprintf("reads outputs of %s, which will run", up))
		}
	}
	if len(out) == 0 {
		out = []string{"inputs are known only after apply"}
	}
	return out
}

// changeReasons names what differs from the recorded run: the plugin, the
// body's arguments, or else the contents of the files it reads.
func changeReasons(prior *state.Stage, sp *StagePlan, files []inputFile) []string {
	var out []string
	if prior.Plugin.Name != sp.Plugin.Name || prior.Plugin.Version != sp.Plugin.Version {
		out = append(out, fmt.Sprintf("plugin %s %s -> %s %s", prior.Plugin.Name, prior.Plugin.Version, sp.Plugin.Name, sp.Plugin.Version))
	}
	var before, after map[string]json.RawMessage
	json.Unmarshal(prior.Config, &before)
	json.Unmarshal(sp.Config, &after)
	var changed []string
	for k, v := range after {
		if !sameJSON(before[k], v) {
			changed = append(changed, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	for _, k := range changed {
		out = append(out, fmt.Sprintf("%s changed", k))
	}
	if len(out) == 0 && len(files) > 0 {
		attrs := make([]string, len(files))
		for i, f := range files {
			attrs[i] = f.attr
		}
		out = []string{"the contents of a file it reads changed (" + strings.Join(attrs, ", ") + ")"}
	}
	if len(out) == 0 {
		out = []string{"inputs changed"}
	}
	return out
}

// sameJSON compares two JSON values whatever their layout: state keeps
// the config indented, the plan compact.
func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return string(a) == string(b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// InputHash identifies everything a stage's run depends on: the plugin, the
// stage type, the decoded body (which holds any upstream outputs it
// reads) and the contents of the files its contract names. config must be
// wholly known.
func InputHash(plugin PluginRef, stageType string, config cty.Value, files []inputFile) string {
	b, err := ctyjson.Marshal(config, config.Type())
	if err != nil {
		b = []byte(err.Error())
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", plugin.Name, plugin.Version, stageType)
	h.Write(b)
	for _, f := range files {
		fmt.Fprintf(h, "\x00%s\x00%s", f.attr, f.sha256)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// configJSON renders a decoded body as plain JSON, with values known only
// after apply as null and their paths listed.
func configJSON(v cty.Value) (json.RawMessage, []string) {
	var unknown []string
	plain := plainValue(v, "", &unknown)
	b, err := json.Marshal(plain)
	if err != nil {
		b = []byte("null")
	}
	return b, unknown
}

func plainValue(v cty.Value, path string, unknown *[]string) any {
	if !v.IsKnown() {
		*unknown = append(*unknown, path)
		return nil
	}
	if v.IsNull() {
		return nil
	}
	v, _ = v.Unmark()
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		return jsonNumber(v.AsBigFloat())
	case t.IsObjectType() || t.IsMapType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = plainValue(e, joinPath(path, k.AsString()), unknown)
		}
		return out
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		out := []any{}
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, e := it.Element()
			out = append(out, plainValue(e, fmt.Sprintf("%s[%d]", path, i), unknown))
		}
		return out
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonNumber writes integers of up to 64 bits in full and anything else
// in exponent form, which stays short however large the exponent.
func jsonNumber(f *big.Float) json.Number {
	if f.IsInt() && f.MantExp(nil) <= 64 {
		return json.Number(f.Text('f', 0))
	}
	return json.Number(f.Text('g', -1))
}

// OutputsValue turns recorded outputs (typed JSON) back into an object.
func OutputsValue(outputs map[string]json.RawMessage) (cty.Value, error) {
	vals := map[string]cty.Value{}
	for name, raw := range outputs {
		var sv ctyjson.SimpleJSONValue
		if err := sv.UnmarshalJSON(raw); err != nil {
			return cty.NilVal, fmt.Errorf("output %s: %w", name, err)
		}
		vals[name] = sv.Value
	}
	return cty.ObjectVal(vals), nil
}

// EncodeOutputs records outputs as typed JSON for state.
func EncodeOutputs(outputs map[string]cty.Value) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for name, v := range outputs {
		b, err := ctyjson.SimpleJSONValue{Value: v}.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}

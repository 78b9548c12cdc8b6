package plandiff

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
)

// FormatVersion is the version of the diff document (gpuflow diff -json).
// It changes whenever the document's shape changes.
const FormatVersion = "1.0"

// Stage statuses.
const (
	// StatusAdded: the stage is only in the new plan.
	StatusAdded = "added"
	// StatusRemoved: the stage is only in the old plan.
	StatusRemoved = "removed"
	// StatusReplaced: the stage's inputs change (plugin, arguments, or the
	// outputs of an upstream stage it reads), so apply runs it again.
	StatusReplaced = "replaced"
	// StatusChanged: the inputs are the same but the plan around them is
	// not: its estimate, NCCL environment, executor or dependencies.
	StatusChanged = "changed"
	// StatusUnchanged: nothing the diff looks at differs.
	StatusUnchanged = "unchanged"
)

// Diff is the comparison of an old and a new plan.
type Diff struct {
	FormatVersion string `json:"format_version"`
	Old           Side   `json:"old"`
	New           Side   `json:"new"`
	// Variables lists the workload variables whose values differ.
	Variables []Change `json:"variables,omitempty"`
	// Stages holds every stage of either plan: the new plan's stages in
	// its order, then the removed ones in the old plan's order.
	Stages  []*Stage `json:"stages"`
	Summary Summary  `json:"summary"`
}

// Side describes where one of the two plans came from.
type Side struct {
	// Source is what the user named: a plan file, a workload path or
	// git:REF:PATH. Compare leaves it empty for the caller to fill.
	Source         string `json:"source"`
	GpuflowVersion string `json:"gpuflow_version"`
}

// Summary counts stages per status.
type Summary struct {
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Replaced  int `json:"replaced"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// Change is one value that differs, named by its path ("layout.tp",
// "tokenizer.path"). Old or New is absent when the value exists on one
// side only; a sensitive value is never shown.
type Change struct {
	Path      string          `json:"path"`
	Old       json.RawMessage `json:"old,omitempty"`
	New       json.RawMessage `json:"new,omitempty"`
	Sensitive bool            `json:"sensitive,omitempty"`
}

// Stage is one stage's part of the diff.
type Stage struct {
	Address string `json:"address"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	// Reasons say in words why the stage is replaced or changed.
	Reasons []string `json:"reasons,omitempty"`
	// OldAction and NewAction are the plans' actions against their
	// state; they do not decide Status, which compares inputs.
	OldAction string  `json:"old_action,omitempty"`
	NewAction string  `json:"new_action,omitempty"`
	Plugin    *Change `json:"plugin,omitempty"`
	DependsOn *Change `json:"depends_on,omitempty"`
	// Arguments are the stage body's values that differ, outside the
	// hardware, model and layout, which have sections of their own.
	Arguments []Change `json:"arguments,omitempty"`
	Hardware  []Change `json:"hardware,omitempty"`
	Model     []Change `json:"model,omitempty"`
	Layout    *Layout  `json:"layout,omitempty"`
	// Estimate is present when the stage has an estimate on either side
	// and any figure differs.
	Estimate *Estimate    `json:"estimate,omitempty"`
	NCCLEnv  []NCCLChange `json:"nccl_env,omitempty"`
	// Executor lists what changes in where the stage runs (the executor
	// and its job script); it is not one of the stage's inputs.
	Executor   []Change    `json:"executor,omitempty"`
	Numerics   *Numerics   `json:"numerics,omitempty"`
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// HasChanges reports whether the plans differ in anything the diff shows.
func (d *Diff) HasChanges() bool {
	s := d.Summary
	return len(d.Variables) > 0 || s.Added+s.Removed+s.Replaced+s.Changed > 0
}

// Compare diffs two plans of a workload.
func Compare(old, new *engine.Plan) *Diff {
	d := &Diff{
		FormatVersion: FormatVersion,
		Old:           Side{GpuflowVersion: old.GpuflowVersion},
		New:           Side{GpuflowVersion: new.GpuflowVersion},
		Variables:     variableChanges(old.Variables, new.Variables),
	}
	before := map[string]*engine.StagePlan{}
	for _, sp := range old.Stages {
		before[sp.Address] = sp
	}
	byAddr := map[string]*Stage{}
	for _, sp := range new.Stages {
		var st *Stage
		if o := before[sp.Address]; o != nil {
			st = compareStage(o, sp, byAddr)
		} else {
			st = oneSided(sp, StatusAdded)
		}
		byAddr[sp.Address] = st
		d.Stages = append(d.Stages, st)
	}
	for _, sp := range old.Stages {
		if byAddr[sp.Address] == nil {
			d.Stages = append(d.Stages, oneSided(sp, StatusRemoved))
		}
	}
	d.Summary = summarise(d.Stages)
	return d
}

// oneSided describes a stage that exists in one plan only, with its
// estimate so a reviewer sees what an added training stage costs.
func oneSided(sp *engine.StagePlan, status string) *Stage {
	st := &Stage{Address: sp.Address, Type: sp.Type, Status: status}
	plugin := jsonString(pluginName(sp.Plugin))
	if status == StatusAdded {
		st.NewAction = sp.Action
		st.Plugin = &Change{Path: "plugin", New: plugin}
		st.Estimate = compareEstimates(nil, sp.Estimate)
	} else {
		st.OldAction = sp.Action
		st.Plugin = &Change{Path: "plugin", Old: plugin}
		st.Estimate = compareEstimates(sp.Estimate, nil)
	}
	return st
}

// compareStage diffs a stage present in both plans. done holds the new
// plan's stages compared so far; the plan is in dependency order, so a
// stage's upstream stages are already there.
func compareStage(o, n *engine.StagePlan, done map[string]*Stage) *Stage {
	st := &Stage{Address: n.Address, Type: n.Type, OldAction: o.Action, NewAction: n.Action}
	if o.Plugin != n.Plugin {
		st.Plugin = &Change{Path: "plugin", Old: jsonString(pluginName(o.Plugin)), New: jsonString(pluginName(n.Plugin))}
	}
	if strings.Join(o.DependsOn, "\x00") != strings.Join(n.DependsOn, "\x00") {
		st.DependsOn = &Change{Path: "depends_on", Old: mustJSON(o.DependsOn), New: mustJSON(n.DependsOn)}
	}
	config := jsonChanges(o.Config, n.Config)
	st.Arguments = arguments(config, o, n)
	st.Hardware = jsonChanges(mustJSON(o.Hardware), mustJSON(n.Hardware))
	st.Model = jsonChanges(mustJSON(o.Model), mustJSON(n.Model))
	st.Layout = compareLayouts(o, n)
	st.Estimate = compareEstimates(o.Estimate, n.Estimate)
	st.NCCLEnv = compareNCCL(o.NCCLEnv, n.NCCLEnv)
	st.Executor = jsonChanges(mustJSON(comparable(o.Executor)), mustJSON(comparable(n.Executor)))
	upstream := changedUpstream(n, done)
	st.Status, st.Reasons = status(st, config, upstream, n.ConfigUnknown)
	if st.Status == StatusReplaced && o.Layout != nil && n.Layout != nil {
		st.Numerics = checkNumerics(o, n, config, upstream)
		st.Checkpoint = checkCheckpoint(o, n)
	}
	return st
}

// status decides whether the stage runs again and says why. unknown are
// the body's values known only after apply.
func status(st *Stage, config []Change, upstream, unknown []string) (string, []string) {
	var reasons []string
	if st.Plugin != nil {
		reasons = append(reasons, fmt.Sprintf("plugin %s -> %s", rawText(st.Plugin.Old), rawText(st.Plugin.New)))
	}
	if len(config) > 0 {
		reasons = append(reasons, "arguments change: "+strings.Join(topLevelKeys(config), ", "))
	}
	if len(upstream) > 0 {
		reasons = append(reasons, upstreamReason(upstream, unknown))
	}
	if len(reasons) > 0 {
		return StatusReplaced, reasons
	}
	if st.DependsOn != nil {
		reasons = append(reasons, "dependencies change")
	}
	if st.Estimate != nil {
		reasons = append(reasons, "the estimate changes")
	}
	if len(st.NCCLEnv) > 0 {
		reasons = append(reasons, "the NCCL environment changes")
	}
	if len(st.Executor) > 0 {
		reasons = append(reasons, "the executor changes")
	}
	if len(reasons) > 0 {
		return StatusChanged, reasons
	}
	return StatusUnchanged, nil
}

// upstreamReason says why a stage whose body reads other stages' outputs
// runs again. The plan does not record which upstream stage a value comes
// from, so every changed one it depends on is named, as plan does.
func upstreamReason(upstream, unknown []string) string {
	verb := "runs"
	if len(upstream) > 1 {
		verb = "run"
	}
	return fmt.Sprintf("%s, known only after apply, may change: %s, which it depends on, %s again",
		strings.Join(unknown, ", "), strings.Join(upstream, ", "), verb)
}

// changedUpstream lists the stages n depends on that are added or run
// again, when n reads values known only after they run: its inputs then
// change even though its body does not.
func changedUpstream(n *engine.StagePlan, done map[string]*Stage) []string {
	if len(n.ConfigUnknown) == 0 {
		return nil
	}
	var out []string
	for _, up := range n.DependsOn {
		if s := done[up]; s != nil && (s.Status == StatusAdded || s.Status == StatusReplaced) {
			out = append(out, up)
		}
	}
	return out
}

// arguments drops the body's hardware, model and layout values where the
// stage has those resolved on either side: the diff shows them in their
// own sections, field by field.
func arguments(config []Change, o, n *engine.StagePlan) []Change {
	own := map[string]bool{
		"hardware": o.Hardware != nil || n.Hardware != nil,
		"model":    o.Model != nil || n.Model != nil,
		"layout":   o.Layout != nil || n.Layout != nil,
	}
	var out []Change
	for _, c := range config {
		if !own[topLevelKey(c.Path)] {
			out = append(out, c)
		}
	}
	return out
}

func summarise(stages []*Stage) Summary {
	var s Summary
	for _, st := range stages {
		switch st.Status {
		case StatusAdded:
			s.Added++
		case StatusRemoved:
			s.Removed++
		case StatusReplaced:
			s.Replaced++
		case StatusChanged:
			s.Changed++
		default:
			s.Unchanged++
		}
	}
	return s
}

// variableChanges compares variable values; sensitive ones are reported
// without their values.
func variableChanges(old, new map[string]engine.PlanVariable) []Change {
	names := map[string]bool{}
	for k := range old {
		names[k] = true
	}
	for k := range new {
		names[k] = true
	}
	var out []Change
	for _, name := range slices.Sorted(maps.Keys(names)) {
		o, inOld := old[name]
		n, inNew := new[name]
		cs := jsonChanges(valueOrNil(o.Value, inOld), valueOrNil(n.Value, inNew))
		if len(cs) == 0 {
			continue
		}
		c := Change{Path: name, Old: valueOrNil(o.Value, inOld), New: valueOrNil(n.Value, inNew)}
		if o.Sensitive || n.Sensitive {
			c = Change{Path: name, Sensitive: true}
		}
		out = append(out, c)
	}
	return out
}

func valueOrNil(v json.RawMessage, present bool) json.RawMessage {
	if !present {
		return nil
	}
	return compact(v)
}

func pluginName(p engine.PluginRef) string { return p.Name + " " + p.Version }

// comparable is an executor plan without what moves when the file is only
// edited: where the executor's arguments are written.
func comparable(x *engine.ExecutorPlan) *engine.ExecutorPlan {
	if x == nil || x.Kubernetes == nil {
		return x
	}
	c, k := *x, *x.Kubernetes
	k.Positions = nil
	c.Kubernetes = &k
	return &c
}

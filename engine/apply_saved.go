package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/state"
)

// SavedPlanInputs are the variable values a saved plan was made with, as
// -var options, so that applying it loads the workload exactly as planned.
// Nothing comes from the environment: the plan's values are the values.
func SavedPlanInputs(plan *Plan) (dsl.Inputs, error) {
	var in dsl.Inputs
	names := make([]string, 0, len(plan.Variables))
	for name := range plan.Variables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		raw := bytes.TrimSpace(plan.Variables[name].Value)
		if len(raw) == 0 || string(raw) == "null" {
			continue // the declaration's own default (null) applies again
		}
		text, err := variableText(raw)
		if err != nil {
			return in, fmt.Errorf("variable %s in the plan: %w", name, err)
		}
		in.Vars = append(in.Vars, name+"="+text)
	}
	return in, nil
}

// variableText renders a JSON value the way -var takes it: a string as
// its text, anything else as its JSON, which HCL reads as the same value.
func variableText(raw json.RawMessage) (string, error) {
	if raw[0] != '"' {
		return string(raw), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// CheckSavedPlan says why a saved plan may no longer be applied: the
// workload's files or variable values changed since it was made, or the
// state moved on (another apply, a state rm). It returns nil when the plan
// still describes exactly what would run.
func CheckSavedPlan(plan *Plan, w *Workload, current *state.State) error {
	if got := w.ConfigHash(); got != plan.ConfigHash {
		return fmt.Errorf("the workload's files or variables changed since the plan was made; run gpuflow plan again")
	}
	var now PlanState
	if current != nil {
		now = PlanState{Lineage: current.Lineage, Serial: current.Serial}
	}
	switch {
	case plan.State.Lineage == "" && now.Lineage != "":
		return fmt.Errorf("the state was created since the plan was made (an apply ran); run gpuflow plan again")
	case now.Lineage == "" && plan.State.Lineage != "":
		return fmt.Errorf("the state the plan was made against (lineage %s) is gone; run gpuflow plan again", plan.State.Lineage)
	case now.Lineage != plan.State.Lineage:
		return fmt.Errorf("the plan was made against other state (lineage %s, this state is %s); run gpuflow plan again with the right -state", plan.State.Lineage, now.Lineage)
	case now.Serial != plan.State.Serial:
		return fmt.Errorf("the state changed since the plan was made (serial %d, now %d); run gpuflow plan again", plan.State.Serial, now.Serial)
	}
	return nil
}

package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/runlog"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// applyJSONVersion is the version of apply -json's line format; it changes
// whenever a line's shape does.
const applyJSONVersion = "1.0"

// applyJSON writes one JSON object per line to stdout, each with the
// format version, a type and a time. Types: plan, no_changes, apply_start,
// stage_start, log, progress, metric, artifact, stage_end, summary,
// interrupt, diagnostic, error.
type applyJSON struct {
	env *cliEnv
	now func() time.Time
	mu  sync.Mutex
}

func newApplyJSON(env *cliEnv) *applyJSON { return &applyJSON{env: env, now: time.Now} }

type jsonHead struct {
	Version string    `json:"version"`
	Type    string    `json:"type"`
	Time    time.Time `json:"time"`
}

// emit writes head's fields and body's as one line.
func (v *applyJSON) emit(typ string, at time.Time, body any) {
	fields := map[string]any{}
	if body != nil {
		b, err := json.Marshal(body)
		if err == nil {
			err = json.Unmarshal(b, &fields)
		}
		if err != nil {
			fields = map[string]any{"message": fmt.Sprintf("encoding %s: %s", typ, err)}
		}
	}
	fields["version"], fields["type"], fields["time"] = applyJSONVersion, typ, at.UTC().Format(time.RFC3339Nano)
	line, _ := json.Marshal(fields) // strings, numbers and maps only
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprintln(v.env.stdout, string(line))
}

type jsonStageStart struct {
	Stage             string  `json:"stage"`
	Action            string  `json:"action"`
	Plugin            string  `json:"plugin"`
	PluginVersion     string  `json:"plugin_version"`
	ExpectedDurationS float64 `json:"expected_duration_s,omitempty"`
}

func (v *applyJSON) StageStarted(sp *engine.StagePlan, at time.Time) {
	v.emit("stage_start", at, jsonStageStart{sp.Address, sp.Action, sp.Plugin.Name, sp.Plugin.Version, sp.ExpectedDurationS})
}

func (v *applyJSON) StageEvent(address string, e api.Event) {
	ev := runlog.Encode(address, e)
	v.emit(ev.Type, ev.Time, ev)
}

type jsonStageEnd struct {
	Stage       string                     `json:"stage"`
	Outcome     string                     `json:"outcome"`
	Reason      string                     `json:"reason,omitempty"`
	DurationS   float64                    `json:"duration_s"`
	RunID       string                     `json:"run_id,omitempty"`
	LogPath     string                     `json:"log_path,omitempty"`
	Outputs     map[string]json.RawMessage `json:"outputs,omitempty"`
	Diagnostics []jsonDiagnostic           `json:"diagnostics,omitempty"`
}

func (v *applyJSON) StageFinished(r *engine.StageResult) {
	v.emit("stage_end", v.now(), jsonStageEnd{r.Address, r.Outcome, r.Reason, r.Duration().Seconds(), r.RunID, r.LogPath,
		r.Outputs, jsonDiagnostics(r.Diagnostics)})
}

type jsonDiagnostic struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *jsonRange `json:"range,omitempty"`
}

type jsonRange struct {
	Filename string `json:"filename"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

func jsonDiagnostics(diags hcl.Diagnostics) []jsonDiagnostic {
	var out []jsonDiagnostic
	for _, d := range diags {
		jd := jsonDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
		}
		if d.Subject != nil {
			jd.Range = &jsonRange{d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column}
		}
		out = append(out, jd)
	}
	return out
}

type jsonPlanSummary struct {
	Workload string             `json:"workload"`
	Summary  engine.PlanSummary `json:"summary"`
}

func (v *applyJSON) Plan(plan *engine.Plan) {
	v.emit("plan", v.now(), jsonPlanSummary{plan.Workload, plan.Summary})
}

func (v *applyJSON) NoChanges(plan *engine.Plan) {
	v.emit("no_changes", v.now(), jsonPlanSummary{plan.Workload, plan.Summary})
}

func (v *applyJSON) Started(plan *engine.Plan) {
	v.emit("apply_start", v.now(), jsonPlanSummary{plan.Workload, plan.Summary})
}

type jsonSummary struct {
	Succeeded   int                 `json:"succeeded"`
	Unchanged   int                 `json:"unchanged"`
	Failed      int                 `json:"failed"`
	Interrupted int                 `json:"interrupted"`
	Skipped     int                 `json:"skipped"`
	Stages      []jsonStageEnd      `json:"stages"`
	Outputs     []engine.PlanOutput `json:"outputs,omitempty"`
}

func (v *applyJSON) Finished(res *engine.ApplyResult, _ map[string][]byte) {
	s := jsonSummary{Succeeded: res.Count(engine.OutcomeSucceeded), Unchanged: res.Count(engine.OutcomeUnchanged),
		Failed: res.Count(engine.OutcomeFailed), Interrupted: res.Count(engine.OutcomeInterrupted),
		Skipped: res.Count(engine.OutcomeSkipped), Stages: []jsonStageEnd{}, Outputs: res.Outputs}
	for _, r := range res.Stages {
		s.Stages = append(s.Stages, jsonStageEnd{Stage: r.Address, Outcome: r.Outcome, Reason: r.Reason,
			DurationS: r.Duration().Seconds(), RunID: r.RunID, LogPath: r.LogPath})
	}
	v.emit("summary", v.now(), s)
}

func (v *applyJSON) Interrupted() {
	v.emit("interrupt", v.now(), map[string]string{"message": "stopping the running stages"})
}

func (v *applyJSON) Diagnostics(diags hcl.Diagnostics, _ map[string][]byte) {
	for _, d := range jsonDiagnostics(diags) {
		v.emit("diagnostic", v.now(), d)
	}
}

func (v *applyJSON) Error(err error) {
	v.emit("error", v.now(), map[string]string{"message": err.Error()})
}

func (v *applyJSON) Close() {}

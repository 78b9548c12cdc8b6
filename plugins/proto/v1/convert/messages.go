package convert

import (
	"fmt"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
	pluginv1 "github.com/gpuflow/gpuflow/plugins/proto/v1"
)

// StageRequestToProto encodes a stage request.
func StageRequestToProto(r *api.StageRequest) (*pluginv1.StageRequest, error) {
	config, err := ValueToProto(r.Config)
	if err != nil {
		return nil, fmt.Errorf("stage config: %w", err)
	}
	return &pluginv1.StageRequest{
		Type:    r.Type,
		Name:    r.Name,
		Config:  config,
		WorkDir: r.WorkDir,
		Env:     r.Env,
	}, nil
}

// StageRequestFromProto decodes what StageRequestToProto encoded.
func StageRequestFromProto(r *pluginv1.StageRequest) (*api.StageRequest, error) {
	config, err := ValueFromProto(r.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("stage config: %w", err)
	}
	return &api.StageRequest{
		Type:    r.GetType(),
		Name:    r.GetName(),
		Config:  config,
		WorkDir: r.GetWorkDir(),
		Env:     r.GetEnv(),
	}, nil
}

// ApplyRequestToProto encodes an apply request.
func ApplyRequestToProto(r *api.ApplyRequest) (*pluginv1.ApplyStage_Request, error) {
	stage, err := StageRequestToProto(&r.StageRequest)
	if err != nil {
		return nil, err
	}
	return &pluginv1.ApplyStage_Request{Stage: stage, RunDir: r.RunDir}, nil
}

// ApplyRequestFromProto decodes what ApplyRequestToProto encoded.
func ApplyRequestFromProto(r *pluginv1.ApplyStage_Request) (*api.ApplyRequest, error) {
	stage, err := StageRequestFromProto(r.GetStage())
	if err != nil {
		return nil, err
	}
	return &api.ApplyRequest{StageRequest: *stage, RunDir: r.GetRunDir()}, nil
}

// PlanToProto encodes a plan response.
func PlanToProto(p *api.PlanResponse) *pluginv1.PlanStage_Response {
	out := &pluginv1.PlanStage_Response{
		Claims: &pluginv1.PlanStage_Claims{
			Nodes:       int64(p.Claims.Nodes),
			GpusPerNode: int64(p.Claims.GPUsPerNode),
		},
		ExpectedDurationS: p.ExpectedDuration.Seconds(),
		Diagnostics:       DiagnosticsToProto(p.Diagnostics),
	}
	for _, d := range p.Details {
		out.Details = append(out.Details, &pluginv1.PlanStage_Detail{Key: d.Key, Value: d.Value})
	}
	return out
}

// PlanFromProto decodes what PlanToProto encoded.
func PlanFromProto(p *pluginv1.PlanStage_Response) *api.PlanResponse {
	out := &api.PlanResponse{
		Claims: api.Claims{
			Nodes:       int(p.GetClaims().GetNodes()),
			GPUsPerNode: int(p.GetClaims().GetGpusPerNode()),
		},
		ExpectedDuration: time.Duration(p.GetExpectedDurationS() * float64(time.Second)),
		Diagnostics:      DiagnosticsFromProto(p.GetDiagnostics()),
	}
	for _, d := range p.GetDetails() {
		out.Details = append(out.Details, api.Detail{Key: d.GetKey(), Value: d.GetValue()})
	}
	return out
}

// EventToProto encodes a stage event. A zero time is stamped with now.
func EventToProto(e api.Event) *pluginv1.ApplyStage_Event {
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	out := &pluginv1.ApplyStage_Event{TimeUnixNano: t.UnixNano()}
	switch {
	case e.Log != nil:
		out.Kind = &pluginv1.ApplyStage_Event_Log{Log: &pluginv1.ApplyStage_Log{
			Level: e.Log.Level, Message: e.Log.Message,
		}}
	case e.Progress != nil:
		out.Kind = &pluginv1.ApplyStage_Event_Progress{Progress: &pluginv1.ApplyStage_Progress{
			Label: e.Progress.Label, Done: e.Progress.Done, Total: e.Progress.Total, Unit: e.Progress.Unit,
		}}
	case e.Metric != nil:
		out.Kind = &pluginv1.ApplyStage_Event_Metric{Metric: &pluginv1.ApplyStage_Metric{
			Name: e.Metric.Name, Value: e.Metric.Value, Unit: e.Metric.Unit, Step: e.Metric.Step,
		}}
	case e.Artifact != nil:
		out.Kind = &pluginv1.ApplyStage_Event_Artifact{Artifact: &pluginv1.ApplyStage_Artifact{
			Name: e.Artifact.Name, Path: e.Artifact.Path, SizeBytes: e.Artifact.Bytes, FileCount: e.Artifact.Files,
		}}
	}
	return out
}

// EventFromProto decodes a stage event. ok is false for a Result or a kind
// this build does not know, neither of which is an event.
func EventFromProto(e *pluginv1.ApplyStage_Event) (ev api.Event, ok bool) {
	ev.Time = time.Unix(0, e.GetTimeUnixNano())
	switch kind := e.GetKind().(type) {
	case *pluginv1.ApplyStage_Event_Log:
		ev.Log = &api.Log{Level: kind.Log.GetLevel(), Message: kind.Log.GetMessage()}
	case *pluginv1.ApplyStage_Event_Progress:
		p := kind.Progress
		ev.Progress = &api.Progress{Label: p.GetLabel(), Done: p.GetDone(), Total: p.GetTotal(), Unit: p.GetUnit()}
	case *pluginv1.ApplyStage_Event_Metric:
		m := kind.Metric
		ev.Metric = &api.Metric{Name: m.GetName(), Value: m.GetValue(), Unit: m.GetUnit(), Step: m.GetStep()}
	case *pluginv1.ApplyStage_Event_Artifact:
		a := kind.Artifact
		ev.Artifact = &api.Artifact{Name: a.GetName(), Path: a.GetPath(), Bytes: a.GetSizeBytes(), Files: a.GetFileCount()}
	default:
		return ev, false
	}
	return ev, true
}

// ResultToProto encodes an apply result as the last event of a stream.
func ResultToProto(r *api.ApplyResponse) (*pluginv1.ApplyStage_Event, error) {
	outputs, err := ValuesToProto(r.Outputs)
	if err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	return &pluginv1.ApplyStage_Event{
		TimeUnixNano: time.Now().UnixNano(),
		Kind: &pluginv1.ApplyStage_Event_Result{Result: &pluginv1.ApplyStage_Result{
			Outputs:     outputs,
			Diagnostics: DiagnosticsToProto(r.Diagnostics),
		}},
	}, nil
}

// ResultFromProto decodes what ResultToProto encoded.
func ResultFromProto(r *pluginv1.ApplyStage_Result) (*api.ApplyResponse, error) {
	outputs, err := ValuesFromProto(r.GetOutputs())
	if err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	return &api.ApplyResponse{Outputs: outputs, Diagnostics: DiagnosticsFromProto(r.GetDiagnostics())}, nil
}

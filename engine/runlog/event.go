package runlog

import (
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// EventJSON is one stage event as written to events.jsonl and apply -json.
// Type says which of the optional fields are set.
type EventJSON struct {
	Time  time.Time `json:"time"`
	Stage string    `json:"stage,omitempty"`
	Type  string    `json:"type"`
	// log
	Level   string `json:"level,omitempty"`
	Message string `json:"message,omitempty"`
	// progress
	Label string   `json:"label,omitempty"`
	Done  *float64 `json:"done,omitempty"`
	Total *float64 `json:"total,omitempty"`
	Unit  string   `json:"unit,omitempty"`
	// metric (Unit shared with progress)
	Name  string   `json:"name,omitempty"`
	Value *float64 `json:"value,omitempty"`
	Step  *int64   `json:"step,omitempty"`
	// artifact (Name shared with metric)
	Path  string `json:"path,omitempty"`
	Bytes *int64 `json:"bytes,omitempty"`
	// Files is set for a folder: how many files it holds.
	Files int64 `json:"files,omitempty"`
}

// Event types.
const (
	TypeLog      = "log"
	TypeProgress = "progress"
	TypeMetric   = "metric"
	TypeArtifact = "artifact"
)

// Encode turns a plugin event of stage into its JSON shape.
func Encode(stage string, e api.Event) EventJSON {
	out := EventJSON{Time: e.Time.UTC(), Stage: stage}
	switch {
	case e.Log != nil:
		out.Type, out.Level, out.Message = TypeLog, e.Log.Level, e.Log.Message
	case e.Progress != nil:
		p := e.Progress
		out.Type, out.Label, out.Done, out.Unit = TypeProgress, p.Label, &p.Done, p.Unit
		if p.Total > 0 {
			out.Total = &p.Total
		}
	case e.Metric != nil:
		m := e.Metric
		out.Type, out.Name, out.Value, out.Unit, out.Step = TypeMetric, m.Name, &m.Value, m.Unit, &m.Step
	case e.Artifact != nil:
		a := e.Artifact
		out.Type, out.Name, out.Path, out.Bytes, out.Files = TypeArtifact, a.Name, a.Path, &a.Bytes, a.Files
	}
	return out
}

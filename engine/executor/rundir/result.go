package rundir

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Result is how the stage ended on one node.
type Result struct {
	Node int
	Host string
	// Outputs and Diagnostics are what the plugin's ApplyStage returned.
	Outputs     map[string]cty.Value
	Diagnostics api.Diagnostics
	// Error says why the node host got no answer from the plugin (it did
	// not start, or its connection broke); empty when it got one.
	Error string
}

type resultJSON struct {
	Node        int                                `json:"node"`
	Host        string                             `json:"host"`
	Outputs     map[string]ctyjson.SimpleJSONValue `json:"outputs,omitempty"`
	Diagnostics []diagnosticJSON                   `json:"diagnostics,omitempty"`
	Error       string                             `json:"error,omitempty"`
}

type diagnosticJSON struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Path     []pathStep `json:"path,omitempty"`
}

// pathStep is one step of a cty.Path: an attribute name, or an index
// into a list (Index) or a map (Key).
type pathStep struct {
	Attr  string `json:"attr,omitempty"`
	Key   string `json:"key,omitempty"`
	Index *int64 `json:"index,omitempty"`
}

// Severities as written.
const (
	severityError   = "error"
	severityWarning = "warning"
)

// WriteResult writes r as nodeDir's result, atomically.
func WriteResult(nodeDir string, r *Result) error {
	j := resultJSON{Node: r.Node, Host: r.Host, Error: r.Error}
	if len(r.Outputs) > 0 {
		j.Outputs = map[string]ctyjson.SimpleJSONValue{}
		for k, v := range r.Outputs {
			j.Outputs[k] = ctyjson.SimpleJSONValue{Value: v}
		}
	}
	for _, d := range r.Diagnostics {
		j.Diagnostics = append(j.Diagnostics, encodeDiagnostic(d))
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the node result: %w", err)
	}
	return writeAtomic(filepath.Join(nodeDir, ResultFile), append(b, '\n'))
}

// ReadResult reads nodeDir's result; os.ErrNotExist (wrapped) means the
// node has not written one.
func ReadResult(nodeDir string) (*Result, error) {
	b, err := os.ReadFile(filepath.Join(nodeDir, ResultFile))
	if err != nil {
		return nil, err
	}
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(nodeDir, ResultFile), err)
	}
	r := &Result{Node: j.Node, Host: j.Host, Error: j.Error}
	if len(j.Outputs) > 0 {
		r.Outputs = map[string]cty.Value{}
		for k, v := range j.Outputs {
			r.Outputs[k] = v.Value
		}
	}
	for _, d := range j.Diagnostics {
		r.Diagnostics = append(r.Diagnostics, d.decode())
	}
	return r, nil
}

func encodeDiagnostic(d api.Diagnostic) diagnosticJSON {
	j := diagnosticJSON{Severity: severityError, Summary: d.Summary, Detail: d.Detail}
	if d.Severity == api.Warning {
		j.Severity = severityWarning
	}
	for _, step := range d.Path {
		j.Path = append(j.Path, encodeStep(step))
	}
	return j
}

func encodeStep(step cty.PathStep) pathStep {
	switch s := step.(type) {
	case cty.GetAttrStep:
		return pathStep{Attr: s.Name}
	case cty.IndexStep:
		if s.Key.Type() == cty.String {
			return pathStep{Key: s.Key.AsString()}
		}
		if s.Key.Type() == cty.Number {
			n, _ := s.Key.AsBigFloat().Int64()
			return pathStep{Index: &n}
		}
	}
	return pathStep{}
}

func (j diagnosticJSON) decode() api.Diagnostic {
	d := api.Diagnostic{Severity: api.Error, Summary: j.Summary, Detail: j.Detail}
	if j.Severity == severityWarning {
		d.Severity = api.Warning
	}
	for _, s := range j.Path {
		switch {
		case s.Index != nil:
			d.Path = d.Path.Index(cty.NumberVal(new(big.Float).SetInt64(*s.Index)))
		case s.Attr != "":
			d.Path = d.Path.GetAttr(s.Attr)
		default:
			d.Path = d.Path.IndexString(s.Key)
		}
	}
	return d
}

package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Request is what every node host of a job runs: one stage, through one
// plugin, with the body the engine decoded.
type Request struct {
	// Plugin names the plugin to start on the node.
	Plugin string
	Stage  api.StageRequest
}

type requestJSON struct {
	Plugin  string                  `json:"plugin"`
	Type    string                  `json:"type"`
	Name    string                  `json:"name"`
	Config  ctyjson.SimpleJSONValue `json:"config"`
	WorkDir string                  `json:"work_dir"`
	Env     map[string]string       `json:"env,omitempty"`
}

// WriteRequest writes r into runDir, atomically.
func WriteRequest(runDir string, r *Request) error {
	b, err := json.MarshalIndent(requestJSON{Plugin: r.Plugin, Type: r.Stage.Type, Name: r.Stage.Name,
		Config: ctyjson.SimpleJSONValue{Value: r.Stage.Config}, WorkDir: r.Stage.WorkDir, Env: r.Stage.Env}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the stage request: %w", err)
	}
	return writeAtomic(filepath.Join(runDir, RequestFile), append(b, '\n'))
}

// ReadRequest reads the request in runDir.
func ReadRequest(runDir string) (*Request, error) {
	b, err := os.ReadFile(filepath.Join(runDir, RequestFile))
	if err != nil {
		return nil, err
	}
	var j requestJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(runDir, RequestFile), err)
	}
	return &Request{Plugin: j.Plugin, Stage: api.StageRequest{Type: j.Type, Name: j.Name, Config: j.Config.Value,
		WorkDir: j.WorkDir, Env: j.Env}}, nil
}

// writeAtomic writes data to path through a temporary file and a rename,
// so that a reader sees all of it or nothing.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

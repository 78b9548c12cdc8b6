package runlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ReadEvents reads the events a run recorded in dir, in order. A line
// that does not parse is reported with its number: events.jsonl is
// written whole lines at a time, so a bad line means the file was edited
// or cut short.
func ReadEvents(dir string) ([]EventJSON, error) {
	path := filepath.Join(dir, EventsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []EventJSON
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var e EventJSON
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s:%d: not an event (%v)", path, line, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// Series is one metric's values in the order the run reported them.
type Series struct {
	Name, Unit string
	Steps      []int64
	Values     []float64
}

// MetricSeries gathers a run's metric events into one series per name.
func MetricSeries(events []EventJSON) map[string]*Series {
	out := map[string]*Series{}
	for _, e := range events {
		if e.Type != TypeMetric || e.Value == nil {
			continue
		}
		s, ok := out[e.Name]
		if !ok {
			s = &Series{Name: e.Name, Unit: e.Unit}
			out[e.Name] = s
		}
		var step int64
		if e.Step != nil {
			step = *e.Step
		}
		s.Steps, s.Values = append(s.Steps, step), append(s.Values, *e.Value)
	}
	return out
}

// InputsFile holds what a run was given: the stage's decoded body and its
// input hash, so that two runs can be compared later.
const InputsFile = "inputs.json"

// Inputs is the content of InputsFile.
type Inputs struct {
	InputHash string          `json:"input_hash"`
	Config    json.RawMessage `json:"config,omitempty"`
}

// ReadInputs reads a run's inputs; os.ErrNotExist for a run that recorded none.
func ReadInputs(dir string) (*Inputs, error) {
	b, err := os.ReadFile(filepath.Join(dir, InputsFile))
	if err != nil {
		return nil, err
	}
	var in Inputs
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, InputsFile), err)
	}
	return &in, nil
}

// List names the runs of a stage under root, oldest first. Run IDs start
// with their time to the second; runs within one second are ordered by
// the time the log's first line gives.
func List(root, stage string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, stage))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "checkpoints" {
			if _, err := os.Stat(filepath.Join(root, stage, e.Name(), EventsFile)); err == nil {
				ids = append(ids, e.Name())
			}
		}
	}
	started := map[string]time.Time{}
	for _, id := range ids {
		started[id] = startTime(filepath.Join(root, stage, id))
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := strings.Compare(a[:min(len(a), len(idTimeLayout))], b[:min(len(b), len(idTimeLayout))]); c != 0 {
			return c
		}
		if c := started[a].Compare(started[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return ids, nil
}

// startTime is the stamp on the first line of a run's log; zero when
// there is none.
func startTime(dir string) time.Time {
	f, err := os.Open(filepath.Join(dir, LogFile))
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return time.Time{}
	}
	stamp, _, _ := strings.Cut(sc.Text(), " ")
	at, _ := time.Parse(time.RFC3339Nano, stamp)
	return at
}

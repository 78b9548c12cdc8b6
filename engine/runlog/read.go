package runlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

package report

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpuflow/gpuflow/engine/runlog"
	"github.com/gpuflow/gpuflow/engine/state"
)

// Load reads a state file and the run folders beside it: a state at
// DIR/state/NAME.json has its runs under DIR/runs.
func Load(stateFile string) (*Report, error) {
	st, err := state.Read(stateFile)
	if errors.Is(err, state.ErrNotExist) {
		return nil, fmt.Errorf("no state at %s: apply the workload first", stateFile)
	}
	if err != nil {
		return nil, err
	}
	runsDir := filepath.Join(filepath.Dir(filepath.Dir(stateFile)), "runs")
	r := &Report{Workload: st.Workload}
	for _, addr := range slices.Sorted(maps.Keys(st.Stages)) {
		sec, err := loadSection(runsDir, st.Stages[addr])
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", addr, err)
		}
		r.Sections = append(r.Sections, sec)
	}
	return r, nil
}

// loadSection reads a stage's latest run folder (named in its log path)
// and builds the figures and tables its type has.
func loadSection(runsDir string, s *state.Stage) (Section, error) {
	sec := Section{Address: s.Address, Status: s.Status}
	if !s.EndedAt.IsZero() {
		sec.Duration = s.EndedAt.Sub(s.StartedAt).Round(time.Millisecond)
	}
	var events []runlog.EventJSON
	if s.LogPath != "" {
		sec.RunID = filepath.Base(filepath.Dir(s.LogPath))
		var err error
		events, err = runlog.ReadEvents(filepath.Join(runsDir, s.Address, sec.RunID))
		if errors.Is(err, os.ErrNotExist) {
			sec.Notes = append(sec.Notes, "Its run folder is gone, so only the summary state keeps is shown.")
		} else if err != nil {
			return sec, err
		}
	}
	in := stageInput{stage: s, series: runlog.MetricSeries(events)}
	switch kind, _, _ := strings.Cut(s.Address, "."); kind {
	case "pretrain", "finetune":
		in.training(&sec)
	case "benchmark":
		if err := in.benchmark(&sec); err != nil {
			return sec, err
		}
	case "data_prep":
		in.dataPrep(&sec)
	case "eval":
		in.evaluation(&sec)
	}
	if t, ok := metricsTable(s.Metrics); ok {
		sec.Tables = append(sec.Tables, t)
	}
	return sec, nil
}

// stageInput is what a section is built from.
type stageInput struct {
	stage  *state.Stage
	series map[string]*runlog.Series
}

package train

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// trainerEvent is one JSON line the trainer's rank 0 prints on stdout:
// {"event": "step" | "valid" | "log" | "checkpoint" | "error" | "stopped" | "result" | "eval", ...}.
type trainerEvent struct {
	Event string `json:"event"`
	// step; Loss is null where fp16's loss overflowed and the step was
	// skipped
	Step        int64    `json:"step"`
	Steps       int64    `json:"steps"`
	Loss        *float64 `json:"loss"`
	LR          float64  `json:"lr"`
	TokensPerS  float64  `json:"tokens_per_s"`
	MFU         float64  `json:"mfu"`
	MemoryBytes int64    `json:"memory_bytes"`
	StepTimeS   float64  `json:"step_time_s"`
	// step under fp16 only: the loss scale the step used and the steps
	// skipped so far
	LossScale    *float64 `json:"loss_scale"`
	SkippedSteps *int64   `json:"skipped_steps"`
	// valid
	ValidLoss       float64 `json:"valid_loss"`
	ValidPerplexity float64 `json:"valid_perplexity"`
	// log
	Level   string `json:"level"`
	Message string `json:"message"`
	// error
	Summary string `json:"summary"`
	Detail  string `json:"detail"`
	// checkpoint, stopped
	Path string `json:"path"`
	// result
	Result *trainerResult `json:"result"`
	// eval: an evaluation's measures
	Eval *evalResult `json:"eval"`
}

// trainerResult is what a finished run measured; it becomes the stage's
// outputs.
type trainerResult struct {
	Checkpoint             string  `json:"checkpoint"`
	FinalLoss              float64 `json:"final_loss"`
	TokensPerS             float64 `json:"tokens_per_s"`
	MFU                    float64 `json:"mfu"`
	PeakMemoryBytes        int64   `json:"peak_memory_bytes"`
	PeakMemoryBytesPerRank []int64 `json:"peak_memory_bytes_per_rank"`
	PeakAllocatedBytes     int64   `json:"peak_allocated_bytes"`
	Steps                  int64   `json:"steps"`
	Tokens                 int64   `json:"tokens"`
	ResumedFromStep        int64   `json:"resumed_from_step"`
	Adapters               string  `json:"adapters"`
	Merged                 string  `json:"merged"`
	// ValidLoss and ValidPerplexity are the last validation's, absent
	// when the run had no validation data.
	ValidLoss       *float64 `json:"valid_loss"`
	ValidPerplexity *float64 `json:"valid_perplexity"`
	// LossScale and SkippedSteps are the loss scaler's at the end (its
	// scale, and the steps it skipped since the first step), only under
	// fp16.
	LossScale    *float64 `json:"loss_scale"`
	SkippedSteps *int64   `json:"skipped_steps"`
}

// rankPrefix is what torchrun may put before a worker's line ("[rank0]:",
// "[default0]:").
var rankPrefix = regexp.MustCompile(`^\[[A-Za-z_]*\d+\]:\s?`)

// monitor turns the trainer's output into events and remembers what the
// stage's result needs.
type monitor struct {
	sink api.EventSink
	now  func() time.Time

	mu         sync.Mutex
	result     *trainerResult
	eval       *evalResult
	errors     []trainerEvent
	stopped    *trainerEvent
	checkpoint string
	lastStep   int64
	stderrTail []string
}

// stderrTailLines is how many stderr lines a failure quotes.
const stderrTailLines = 20

func newMonitor(sink api.EventSink) *monitor {
	return &monitor{sink: sink, now: time.Now}
}

// stdoutLine handles a line of the trainer's stdout: an event, or a log line.
func (m *monitor) stdoutLine(line string) {
	line = rankPrefix.ReplaceAllString(strings.TrimRight(line, "\r\n"), "")
	var ev trainerEvent
	if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &ev) == nil && ev.Event != "" {
		m.handle(ev)
		return
	}
	if strings.TrimSpace(line) != "" {
		m.log("info", line)
	}
}

// stderrLine logs a line of stderr and keeps it for a failure's message.
func (m *monitor) stderrLine(line string) {
	line = strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(line) == "" {
		return
	}
	m.mu.Lock()
	m.stderrTail = append(m.stderrTail, line)
	if len(m.stderrTail) > stderrTailLines {
		m.stderrTail = m.stderrTail[len(m.stderrTail)-stderrTailLines:]
	}
	m.mu.Unlock()
	m.log("warn", line)
}

func (m *monitor) handle(ev trainerEvent) {
	switch ev.Event {
	case "step":
		m.step(ev)
	case "valid":
		m.valid(ev)
	case "log":
		m.log(orDefault(ev.Level, "info"), ev.Message)
	case "checkpoint":
		m.mu.Lock()
		m.checkpoint = ev.Path
		m.mu.Unlock()
		m.log("info", "checkpoint at step "+itoa(ev.Step)+": "+ev.Path)
		m.sink.Send(api.Event{Time: m.now(), Artifact: checkpointArtifact(ev.Path)})
	case "error":
		m.mu.Lock()
		m.errors = append(m.errors, ev)
		m.mu.Unlock()
		m.log("error", ev.Summary+": "+ev.Detail)
	case "stopped":
		m.mu.Lock()
		m.stopped = &ev
		m.mu.Unlock()
		m.log("warn", "stopped at step "+itoa(ev.Step))
	case "result":
		m.mu.Lock()
		m.result = ev.Result
		m.mu.Unlock()
	case "eval":
		m.mu.Lock()
		m.eval = ev.Eval
		m.mu.Unlock()
	}
}

// step reports a training step as progress and metrics.
func (m *monitor) step(ev trainerEvent) {
	m.mu.Lock()
	m.lastStep = ev.Step
	m.mu.Unlock()
	t := m.now()
	m.sink.Send(api.Event{Time: t, Progress: &api.Progress{Label: "train", Done: float64(ev.Step), Total: float64(ev.Steps), Unit: "steps"}})
	var metrics []api.Metric
	if ev.Loss != nil {
		metrics = append(metrics, api.Metric{Name: "loss", Value: *ev.Loss})
	}
	metrics = append(metrics,
		api.Metric{Name: "lr", Value: ev.LR},
		api.Metric{Name: "tokens_per_s", Value: ev.TokensPerS, Unit: "tokens/s"},
		api.Metric{Name: "mfu", Value: ev.MFU},
		api.Metric{Name: "memory", Value: float64(ev.MemoryBytes), Unit: "bytes"},
		api.Metric{Name: "step_time", Value: ev.StepTimeS, Unit: "s"})
	if ev.LossScale != nil && ev.SkippedSteps != nil {
		metrics = append(metrics, api.Metric{Name: "loss_scale", Value: *ev.LossScale},
			api.Metric{Name: "skipped_steps", Value: float64(*ev.SkippedSteps)})
	}
	for _, metric := range metrics {
		metric.Step = ev.Step
		m.sink.Send(api.Event{Time: t, Metric: &metric})
	}
}

// valid reports a validation as metrics of the step it followed, and a
// log line.
func (m *monitor) valid(ev trainerEvent) {
	t := m.now()
	for _, metric := range []api.Metric{
		{Name: "valid_loss", Value: ev.ValidLoss, Step: ev.Step},
		{Name: "valid_perplexity", Value: ev.ValidPerplexity, Step: ev.Step},
	} {
		m.sink.Send(api.Event{Time: t, Metric: &metric})
	}
	m.log("info", fmt.Sprintf("validation at step %d: loss %.4g, perplexity %.4g", ev.Step, ev.ValidLoss, ev.ValidPerplexity))
}

func (m *monitor) log(level, msg string) {
	m.sink.Send(api.Event{Time: m.now(), Log: &api.Log{Level: level, Message: msg}})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// checkpointArtifact is a checkpoint folder with its file count and size;
// a folder that cannot be read is still named.
func checkpointArtifact(path string) *api.Artifact {
	a, err := api.ArtifactAt("checkpoint", path)
	if err != nil {
		return &api.Artifact{Name: "checkpoint", Path: path}
	}
	return a
}

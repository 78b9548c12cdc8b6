package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// tail keeps the last lines a plugin process wrote to its stderr, both the
// raw stream (where a Go panic lands) and what go-plugin forwards of
// os.Stderr after the handshake, so that a crash can be reported with them.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
	// panicking is set from the first line of a Go panic on: from then on
	// the tail keeps the panic's first lines, its message and the top of
	// its stack, rather than the bottom of a long trace.
	panicking bool
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.panicking && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
		t.panicking = true
		t.lines = nil
	}
	if t.panicking && len(t.lines) >= t.max {
		return
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		// Copy so the backing array does not grow forever.
		t.lines = slices.Clone(t.lines[len(t.lines)-t.max:])
	}
}

// Lines returns a copy of the kept lines, oldest first.
func (t *tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// addStderrLine keeps a raw stderr line. JSON lines are the plugin's hclog
// output: only info and above are kept, rendered as "[LEVEL] message", so
// go-plugin's own debug chatter does not push a panic out of the tail.
func (t *tail) addStderrLine(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	var entry struct {
		Level   string `json:"@level"`
		Message string `json:"@message"`
	}
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &entry) != nil || entry.Message == "" {
		t.add(line)
		return
	}
	level := hclog.LevelFromString(entry.Level)
	if level != hclog.NoLevel && level < hclog.Info {
		return
	}
	t.add(fmt.Sprintf("[%s] %s", strings.ToUpper(entry.Level), entry.Message))
}

// lineWriter splits what is written to it into lines for a callback. Its
// owner writes from one goroutine; go-plugin's stderr and stdio copiers
// each get their own lineWriter.
type lineWriter struct {
	partial []byte
	line    func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	data := append(w.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		w.line(string(bytes.TrimSuffix(data[:i], []byte("\r"))))
		data = data[i+1:]
	}
	w.partial = append(w.partial[:0:0], data...)
	return len(p), nil
}

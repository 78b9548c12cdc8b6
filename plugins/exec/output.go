package exec

import (
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// tailLines is how many trailing lines of output a stage keeps for its
// stdout_tail output and for the message of a failure.
const tailLines = 20

// maxLine bounds a line held in memory; a longer one is cut into pieces.
const maxLine = 64 << 10

// outputSink receives one output stream of the command: it copies the
// bytes to a log file untouched, sends each line as a log event and keeps
// the last lines. os/exec writes to it from one goroutine and Wait waits
// for that goroutine, so it needs no lock.
type outputSink struct {
	file    io.Writer
	events  api.EventSink
	partial []byte
	tail    []string
	fileErr error
}

func (o *outputSink) Write(p []byte) (int, error) {
	if o.fileErr == nil {
		_, o.fileErr = o.file.Write(p)
	}
	data := append(o.partial, p...)
	for {
		n, skip := nextLine(data)
		if n < 0 {
			break
		}
		o.line(data[:n])
		data = data[n+skip:]
	}
	o.partial = append(o.partial[:0:0], data...)
	return len(p), nil
}

// nextLine finds the end of the first line in data: its length, and how
// many bytes end it (1 for a newline, 0 where an overlong line is cut).
// n is -1 when data holds no whole line yet.
func nextLine(data []byte) (n, skip int) {
	i := bytes.IndexByte(data, '\n')
	switch {
	case i >= 0 && i <= maxLine:
		return i, 1
	case len(data) >= maxLine:
		return maxLine, 0
	}
	return -1, 0
}

// flush emits a last line that had no newline.
func (o *outputSink) flush() {
	if len(o.partial) > 0 {
		o.line(o.partial)
		o.partial = nil
	}
}

func (o *outputSink) line(b []byte) {
	line := strings.TrimSuffix(string(b), "\r")
	o.events.Send(api.Event{Time: time.Now(), Log: &api.Log{Level: "info", Message: line}})
	o.tail = append(o.tail, line)
	if len(o.tail) > tailLines {
		o.tail = append(o.tail[:0:0], o.tail[len(o.tail)-tailLines:]...)
	}
}

package train

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// preflightTimeout bounds the check; importing PyTorch takes seconds.
const preflightTimeout = 3 * time.Minute

// preflightReport is what trainer/preflight.py prints: the software the
// run would use and the problems that would make it fail or crawl.
type preflightReport struct {
	Python     string    `json:"python"`
	Torch      string    `json:"torch"`
	CUDA       string    `json:"cuda"`
	GPUs       int       `json:"gpus"`
	GPUName    string    `json:"gpu_name"`
	NCCL       string    `json:"nccl"`
	SystemNCCL string    `json:"system_nccl"`
	Problems   []problem `json:"problems"`
	Warnings   []problem `json:"warnings"`
}

type problem struct {
	Summary string `json:"summary"`
	Detail  string `json:"detail"`
}

// preflight runs the trainer's own check with the Python that will train,
// before torchrun starts: no Python, no PyTorch, no GPU, too few GPUs, a
// run that would fall back to Gloo, or a PyTorch NCCL that differs from
// the system's each fail the stage at once with a diagnostic.
func preflight(ctx context.Context, l *Launch, env []string) (preflightReport, api.Diagnostics) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	script := filepath.Join(filepath.Dir(l.Torchrun.Script), preflightScript)
	cmd := exec.CommandContext(ctx, l.Torchrun.Python, script,
		"--gpus", strconv.Itoa(l.Torchrun.ProcsPerNode), "--precision", l.Config.Layout.Precision, "--device", l.Config.Device)
	var stdout, stderr bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	err := cmd.Run()
	var rep preflightReport
	if jsonErr := json.Unmarshal(lastLine(stdout.Bytes()), &rep); jsonErr != nil || err != nil {
		return rep, api.Diagnostics{preflightFailure(l.Torchrun.Python, cmd.ProcessState == nil, err, stderr.String())}
	}
	var diags api.Diagnostics
	for _, p := range rep.Problems {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: p.Summary, Detail: p.Detail})
	}
	for _, p := range rep.Warnings {
		diags = append(diags, api.Diagnostic{Severity: api.Warning, Summary: p.Summary, Detail: p.Detail})
	}
	return rep, diags
}

// preflightFailure explains a check that could not run at all.
func preflightFailure(python string, notStarted bool, err error, stderr string) api.Diagnostic {
	if notStarted {
		return api.Diagnostic{Severity: api.Error, Summary: "Python not found",
			Detail: fmt.Sprintf("The trainer runs with %q, which cannot be started: %s. Install Python 3 with PyTorch, or set GPUFLOW_PYTHON to the interpreter that has it.", python, err)}
	}
	detail := fmt.Sprintf("%q could not run the trainer's pre-flight check", python)
	if err != nil {
		detail += " (" + err.Error() + ")"
	}
	if tail := strings.TrimSpace(stderr); tail != "" {
		detail += ". It wrote:\n  " + strings.Join(lastLines(tail, 10), "\n  ")
	}
	return api.Diagnostic{Severity: api.Error, Summary: "Trainer pre-flight check failed", Detail: detail + "."}
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

func lastLines(s string, n int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// describe is the pre-flight report as one log line.
func (r preflightReport) describe() string {
	if r.GPUs == 0 {
		return fmt.Sprintf("Python %s, PyTorch %s, ranks on CPU cores", r.Python, r.Torch)
	}
	return fmt.Sprintf("Python %s, PyTorch %s (CUDA %s, NCCL %s; system NCCL %s), %d x %s",
		r.Python, r.Torch, r.CUDA, r.NCCL, orDefault(r.SystemNCCL, "none"), r.GPUs, r.GPUName)
}

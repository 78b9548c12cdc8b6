package exec_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/exec"
)

// body builds a stage body as the engine decodes it: every attribute
// present, null where not written.
func body(attrs map[string]cty.Value) cty.Value {
	full := map[string]cty.Value{
		"command": cty.NullVal(cty.List(cty.String)),
		"env":     cty.NullVal(cty.Map(cty.String)),
		"dir":     cty.NullVal(cty.String),
		"timeout": cty.NullVal(cty.String),
	}
	for k, v := range attrs {
		full[k] = v
	}
	return cty.ObjectVal(full)
}

func command(argv ...string) cty.Value {
	var vals []cty.Value
	for _, a := range argv {
		vals = append(vals, cty.StringVal(a))
	}
	return cty.ListVal(vals)
}

var pathCmp = cmp.Comparer(func(a, b cty.Path) bool { return a.Equals(b) })

func TestValidate(t *testing.T) {
	t.Parallel()
	type diag struct {
		Summary string
		Path    cty.Path
	}
	tests := map[string]struct {
		body cty.Value
		want []diag
	}{
		"minimal":                 {body(map[string]cty.Value{"command": command("true")}), nil},
		"all":                     {body(map[string]cty.Value{"command": command("true"), "env": cty.MapVal(map[string]cty.Value{"A": cty.StringVal("1")}), "dir": cty.StringVal("d"), "timeout": cty.StringVal("10m")}), nil},
		"empty":                   {body(map[string]cty.Value{"command": cty.ListValEmpty(cty.String)}), []diag{{"Empty command", cty.GetAttrPath("command")}}},
		"empty prog":              {body(map[string]cty.Value{"command": command("", "x")}), []diag{{"Empty program name", cty.GetAttrPath("command").IndexInt(0)}}},
		"null arg":                {body(map[string]cty.Value{"command": cty.ListVal([]cty.Value{cty.StringVal("a"), cty.NullVal(cty.String)})}), []diag{{"Null element", cty.GetAttrPath("command").IndexInt(1)}}},
		"bad timeout":             {body(map[string]cty.Value{"command": command("true"), "timeout": cty.StringVal("soon")}), []diag{{"Invalid timeout", cty.GetAttrPath("timeout")}}},
		"zero timeout":            {body(map[string]cty.Value{"command": command("true"), "timeout": cty.StringVal("0s")}), []diag{{"Invalid timeout", cty.GetAttrPath("timeout")}}},
		"bad env name":            {body(map[string]cty.Value{"command": command("true"), "env": cty.MapVal(map[string]cty.Value{"A=B": cty.StringVal("1")})}), []diag{{"Invalid environment variable name", cty.GetAttrPath("env").IndexString("A=B")}}},
		"empty prog, unknown arg": {body(map[string]cty.Value{"command": cty.ListVal([]cty.Value{cty.StringVal(""), cty.UnknownVal(cty.String)})}), []diag{{"Empty program name", cty.GetAttrPath("command").IndexInt(0)}}},
		"unknown prog":            {body(map[string]cty.Value{"command": cty.ListVal([]cty.Value{cty.UnknownVal(cty.String), cty.StringVal("")})}), nil},
		"unknown command":         {body(map[string]cty.Value{"command": cty.UnknownVal(cty.List(cty.String))}), nil},
		"unknowns":                {body(map[string]cty.Value{"command": cty.ListVal([]cty.Value{cty.StringVal("x"), cty.UnknownVal(cty.String)}), "timeout": cty.UnknownVal(cty.String), "env": cty.UnknownVal(cty.Map(cty.String))}), nil},
	}
	p := exec.New(exec.Options{})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags, err := p.ValidateStage(t.Context(), &api.StageRequest{Type: "exec", Config: tc.body})
			if err != nil {
				t.Fatal(err)
			}
			var got []diag
			for _, d := range diags {
				got = append(got, diag{d.Summary, d.Path})
			}
			if diff := cmp.Diff(tc.want, got, pathCmp); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanDetails(t *testing.T) {
	t.Parallel()
	p := exec.New(exec.Options{})
	plan, err := p.PlanStage(t.Context(), &api.StageRequest{Type: "exec", WorkDir: "/w", Config: body(map[string]cty.Value{
		"command": command("python", "train.py", "--name", "my run"),
		"env":     cty.MapVal(map[string]cty.Value{"B": cty.StringVal("2"), "A": cty.UnknownVal(cty.String)}),
		"dir":     cty.StringVal("jobs"),
		"timeout": cty.StringVal("90m"),
	})})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Detail{
		{Key: "command", Value: "python train.py --name 'my run'"},
		{Key: "dir", Value: "/w/jobs"},
		{Key: "env", Value: "(known after apply)"},
		{Key: "timeout", Value: "1h30m0s"},
	}
	if diff := cmp.Diff(want, plan.Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}

// recorder keeps the log lines and artifacts an apply sends.
type recorder struct {
	mu        sync.Mutex
	logs      []string
	artifacts []string
	started   chan struct{}
	once      sync.Once
}

func newRecorder() *recorder { return &recorder{started: make(chan struct{})} }

func (r *recorder) Send(e api.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Log != nil {
		r.logs = append(r.logs, e.Log.Message)
		r.once.Do(func() { close(r.started) })
	}
	if e.Artifact != nil {
		r.artifacts = append(r.artifacts, e.Artifact.Name+"="+filepath.Base(e.Artifact.Path)+":"+strconv.FormatInt(e.Artifact.Bytes, 10))
	}
}

func apply(t *testing.T, p *exec.Provider, ctx context.Context, attrs map[string]cty.Value, rec *recorder) (*api.ApplyResponse, string) {
	t.Helper()
	runDir := filepath.Join(t.TempDir(), "run")
	resp, err := p.ApplyStage(ctx, &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: "exec", Name: "t", Config: body(attrs), WorkDir: t.TempDir(), Env: map[string]string{"FROM_ENGINE": "e", "OVERRIDDEN": "engine"}},
		RunDir:       runDir,
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	return resp, runDir
}

func TestApplySuccess(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	resp, runDir := apply(t, exec.New(exec.Options{}), t.Context(), map[string]cty.Value{
		"command": command("sh", "-c", `echo out1; echo err1 >&2; printf 'out2\n%s\n%s' "$FROM_ENGINE" "$OVERRIDDEN"`),
		"env":     cty.MapVal(map[string]cty.Value{"OVERRIDDEN": cty.StringVal("stage")}),
	}, rec)
	if resp.Diagnostics != nil {
		t.Fatal(resp.Diagnostics)
	}
	want := map[string]cty.Value{"exit_code": cty.NumberIntVal(0), "stdout_tail": cty.StringVal("out1\nout2\ne\nstage")}
	if diff := cmp.Diff(want, resp.Outputs, cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	stdout, _ := os.ReadFile(filepath.Join(runDir, "stdout.log"))
	stderr, _ := os.ReadFile(filepath.Join(runDir, "stderr.log"))
	if string(stdout) != "out1\nout2\ne\nstage" || string(stderr) != "err1\n" {
		t.Errorf("log files: stdout %q, stderr %q", stdout, stderr)
	}
	logs := strings.Join(rec.logs, "|")
	for _, line := range []string{"out1", "err1", "out2", "stage"} {
		if !strings.Contains(logs, line) {
			t.Errorf("no log event %q in %q", line, logs)
		}
	}
	if diff := cmp.Diff([]string{"stdout=stdout.log:17", "stderr=stderr.log:5"}, rec.artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
}

func TestApplyKeepsLastStdoutLines(t *testing.T) {
	t.Parallel()
	resp, _ := apply(t, exec.New(exec.Options{}), t.Context(), map[string]cty.Value{"command": command("seq", "1", "25")}, newRecorder())
	var want []string
	for i := 6; i <= 25; i++ {
		want = append(want, strconv.Itoa(i))
	}
	if got := resp.Outputs["stdout_tail"].AsString(); got != strings.Join(want, "\n") {
		t.Errorf("stdout_tail = %q", got)
	}
}

func TestApplyRunsInDir(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := exec.New(exec.Options{})
	resp, err := p.ApplyStage(t.Context(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: "exec", Config: body(map[string]cty.Value{"command": command("pwd"), "dir": cty.StringVal("sub")}), WorkDir: work},
		RunDir:       t.TempDir(),
	}, newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(work, "sub"))
	if got := resp.Outputs["stdout_tail"].AsString(); got != want {
		t.Errorf("ran in %q, want %q", got, want)
	}
}

func TestApplyFailures(t *testing.T) {
	t.Parallel()
	type diag struct {
		Summary string
		Path    cty.Path
	}
	tests := map[string]struct {
		attrs    map[string]cty.Value
		exitCode int64
		want     diag
		detail   string // a part of the diagnostic's detail
	}{
		"non-zero exit": {
			map[string]cty.Value{"command": command("sh", "-c", "echo first >&2; echo why it failed >&2; exit 3")},
			3, diag{"Command failed", cty.GetAttrPath("command")}, "exited with status 3.\nThe last lines of its stderr:\n  first\n  why it failed",
		},
		"killed by signal": {
			map[string]cty.Value{"command": command("sh", "-c", "kill -SEGV $$")},
			-1, diag{"Command killed", cty.GetAttrPath("command")}, "segmentation fault",
		},
		"program not found": {
			map[string]cty.Value{"command": command("gpuflow-no-such-program")},
			-1, diag{"Program not found", cty.GetAttrPath("command").IndexInt(0)}, `Cannot run "gpuflow-no-such-program"`,
		},
		"dir not found": {
			map[string]cty.Value{"command": command("true"), "dir": cty.StringVal("missing")},
			-1, diag{"Directory not found", cty.GetAttrPath("dir")}, "missing is not a directory",
		},
		"timeout": {
			map[string]cty.Value{"command": command("sleep", "30"), "timeout": cty.StringVal("200ms")},
			-1, diag{"Timeout reached", cty.GetAttrPath("timeout")}, "ran longer than its timeout of 200ms",
		},
	}
	p := exec.New(exec.Options{})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, _ := apply(t, p, t.Context(), tc.attrs, newRecorder())
			if len(resp.Diagnostics) != 1 {
				t.Fatalf("diagnostics: %+v", resp.Diagnostics)
			}
			d := resp.Diagnostics[0]
			if diff := cmp.Diff(tc.want, diag{d.Summary, d.Path}, pathCmp); diff != "" || d.Severity != api.Error {
				t.Errorf("diagnostic (-want +got):\n%s", diff)
			}
			if !strings.Contains(d.Detail, tc.detail) {
				t.Errorf("detail %q lacks %q", d.Detail, tc.detail)
			}
			if code, _ := resp.Outputs["exit_code"].AsBigFloat().Int64(); code != tc.exitCode {
				t.Errorf("exit_code = %d, want %d", code, tc.exitCode)
			}
		})
	}
}

// running starts an apply of attrs and waits for its first log line.
func running(t *testing.T, p *exec.Provider, ctx context.Context, attrs map[string]cty.Value) (*recorder, <-chan *api.ApplyResponse) {
	t.Helper()
	rec := newRecorder()
	done := make(chan *api.ApplyResponse, 1)
	go func() {
		resp, _ := apply(t, p, ctx, attrs, rec)
		done <- resp
	}()
	select {
	case <-rec.started:
	case resp := <-done:
		t.Fatalf("ended before its first line: %+v", resp.Diagnostics)
	}
	return rec, done
}

func TestStopKillsProcessGroup(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"terminates":      `sleep 30 & echo $!; wait`,
		"ignores SIGTERM": `trap "" TERM; sleep 30 & echo $!; wait`,
	}
	for name, script := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := exec.New(exec.Options{StopGrace: 300 * time.Millisecond})
			rec, done := running(t, p, t.Context(), map[string]cty.Value{"command": command("sh", "-c", script)})
			if err := p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			resp := <-done
			if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != "Stage stopped" {
				t.Errorf("diagnostics = %+v", resp.Diagnostics)
			}
			rec.mu.Lock()
			child, _ := strconv.Atoi(rec.logs[0])
			rec.mu.Unlock()
			// SIGKILL is delivered asynchronously: allow it a moment.
			deadline := time.Now().Add(2 * time.Second)
			for alive(child) {
				if time.Now().After(deadline) {
					t.Fatalf("the background child %d outlived the stop", child)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// alive reports whether pid is a live process (zombies waiting to be
// reaped by an init that does not reap count as dead).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

func TestCancelEndsCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, done := running(t, exec.New(exec.Options{}), ctx, map[string]cty.Value{"command": command("sh", "-c", "echo go; sleep 30")})
	cancel()
	resp := <-done
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != "Stage cancelled" {
		t.Errorf("diagnostics = %+v", resp.Diagnostics)
	}
}

func TestHostLeavingCutsStopGraceShort(t *testing.T) {
	t.Parallel()
	p := exec.New(exec.Options{StopGrace: time.Minute})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, done := running(t, p, ctx, map[string]cty.Value{"command": command("sh", "-c", `trap "" TERM; echo go; sleep 30`)})
	if err := p.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cancel()
	select {
	case <-done:
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the command took %s to end", took)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command kept its minute of grace after the host left")
	}
}

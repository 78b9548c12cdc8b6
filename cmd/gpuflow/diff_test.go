package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/plandiff"
)

// gitRepo is a real repository in a temporary directory.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q")
	return r
}

func (r *gitRepo) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=gpuflow test", "-c", "user.email=test@example.com",
		"-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// commit writes files (path relative to the repository) and commits them.
func (r *gitRepo) commit(files map[string]string) {
	r.t.Helper()
	for name, text := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "change")
}

// swapped7b is workloads/7b-pretrain.hcl before and after the tp/dp swap
// of the tp-dp-swap scenario.
func swapped7b(t *testing.T) (before, after string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "workloads", "7b-pretrain.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	after = string(src)
	for _, e := range diffScenarios["tp-dp-swap"].edits {
		after = strings.Replace(after, e.from, e.to, 1)
	}
	return string(src), after
}

// TestDiffGitRef diffs git:HEAD~1:w.hcl against w.hcl in a real
// repository, from its root, as CI does, and compares with golden files.
// It changes the working directory, so it does not run in parallel.
func TestDiffGitRef(t *testing.T) {
	repo := newGitRepo(t)
	before, after := swapped7b(t)
	repo.commit(map[string]string{"w.hcl": before})
	repo.commit(map[string]string{"w.hcl": after})
	for _, f := range []struct{ suffix, flag string }{{".txt", "-no-color"}, {".md", "-format=markdown"}} {
		stdout := runInDir(t, repo.dir, exitChanges, "diff", f.flag, "git:HEAD~1:w.hcl", "w.hcl")
		checkGolden(t, "diff/git-ref"+f.suffix, stdout)
	}
	runInDir(t, repo.dir, 0, "diff", "git:HEAD:w.hcl", "w.hcl")
}

// runInDir runs gpuflow in dir, checks its exit status and returns its
// output. The working directory is restored before it returns, so golden
// files are found where they live.
func runInDir(t *testing.T, dir string, want int, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	t.Run(strings.Join(args, " "), func(t *testing.T) {
		t.Chdir(dir)
		if code := run(args, testEnv(&stdout, &stderr)); code != want {
			t.Fatalf("exited %d, want %d:\n%s%s", code, want, stdout.String(), stderr.String())
		}
	})
	return stdout.Bytes()
}

// TestGitSources reads files and folders at refs, from the root and from
// a subfolder, and checks the errors for what cannot be read.
func TestGitSources(t *testing.T) {
	t.Parallel()
	repo := newGitRepo(t)
	before, after := swapped7b(t)
	repo.commit(map[string]string{"workloads/7b.hcl": before, "workloads/nested/x.hcl": "ignored", "README": "r"})
	repo.commit(map[string]string{"workloads/7b.hcl": after})
	sub := filepath.Join(repo.dir, "workloads")
	tests := map[string]struct {
		dir, source string
		wantErr     string // a part of the error; empty for success
	}{
		"file from the root":              {dir: repo.dir, source: "git:HEAD~1:workloads/7b.hcl"},
		"file from a subfolder":           {dir: sub, source: "git:HEAD~1:7b.hcl"},
		"root-relative from a subfolder":  {dir: sub, source: "git:HEAD~1:workloads/7b.hcl"},
		"folder":                          {dir: repo.dir, source: "git:HEAD~1:workloads"},
		"current folder from a subfolder": {dir: sub, source: "git:HEAD~1:."},
		"absolute path":                   {dir: sub, source: "git:HEAD~1:" + filepath.Join(repo.dir, "workloads", "7b.hcl")},
		"bad ref":                         {dir: repo.dir, source: "git:no-such-branch:workloads/7b.hcl", wantErr: `git ref "no-such-branch" names no commit`},
		"ref before the file existed":     {dir: repo.dir, source: "git:HEAD~2:workloads/7b.hcl", wantErr: `git ref "HEAD~2" names no commit`},
		"missing path":                    {dir: sub, source: "git:HEAD:nope.hcl", wantErr: `nope.hcl does not exist at HEAD: looked for "workloads/nope.hcl" and "nope.hcl"`},
		"outside the repository":          {dir: repo.dir, source: "git:HEAD:../x.hcl", wantErr: "outside the git repository"},
		"not a repository":                {dir: t.TempDir(), source: "git:HEAD:w.hcl", wantErr: "cannot read from git here"},
		"no path":                         {dir: repo.dir, source: "git:HEAD", wantErr: "git:REF:PATH"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			l := &sideLoader{env: testEnv(&stdout, &stderr), req: planRequest{ignoreState: true}, gitDir: tc.dir}
			plan, ok := l.load(context.Background(), "OLD", tc.source)
			if tc.wantErr != "" {
				if ok || !strings.Contains(stderr.String(), tc.wantErr) {
					t.Fatalf("ok=%v, stderr %q: want an error with %q", ok, stderr.String(), tc.wantErr)
				}
				return
			}
			if !ok {
				t.Fatalf("load %s: %s", tc.source, stderr.String())
			}
			pre := plan.Stages[2]
			if pre.Address != "pretrain.llama7b" || pre.Layout.TP != 2 || pre.Layout.DP != 4 {
				t.Errorf("stage %s with tp %d dp %d, want pretrain.llama7b at HEAD~1 with tp 2 dp 4", pre.Address, pre.Layout.TP, pre.Layout.DP)
			}
		})
	}
}

// TestDiffSidesAgree checks that a saved plan, the workload it came from
// and the same workload at a git ref all compare equal.
func TestDiffSidesAgree(t *testing.T) {
	repo := newGitRepo(t)
	before, _ := swapped7b(t)
	repo.commit(map[string]string{"w.hcl": before})
	runInDir(t, repo.dir, 0, "plan", "-out", "saved.json", "w.hcl")
	for _, pair := range [][2]string{{"saved.json", "w.hcl"}, {"git:HEAD:w.hcl", "saved.json"}, {"git:HEAD:.", "w.hcl"}} {
		runInDir(t, repo.dir, 0, "diff", "-json", pair[0], pair[1])
	}
	out := runInDir(t, repo.dir, 0, "plan", "-compare", "saved.json", "-json", "w.hcl")
	if !strings.Contains(string(out), `"format_version": "`+plandiff.FormatVersion+`"`) {
		t.Errorf("plan -compare -json printed no diff document:\n%s", out)
	}
}

func TestParseGitSource(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in   string
		want gitSource
		ok   bool
	}{
		"file":            {in: "git:HEAD~1:workloads/x.hcl", want: gitSource{ref: "HEAD~1", path: "workloads/x.hcl"}, ok: true},
		"sha and folder":  {in: "git:0123abc:workloads", want: gitSource{ref: "0123abc", path: "workloads"}, ok: true},
		"path with colon": {in: "git:main:a:b.hcl", want: gitSource{ref: "main", path: "a:b.hcl"}, ok: true},
		"no path":         {in: "git:main"},
		"empty ref":       {in: "git::x.hcl"},
		"empty path":      {in: "git:main:"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := parseGitSource(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("error %v, want ok=%v", err, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(gitSource{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffColour colours the human diff on a terminal only, never with
// NO_COLOR or -no-color, and never the Markdown or JSON.
func TestDiffColour(t *testing.T) {
	t.Parallel()
	old := &engine.Plan{Stages: []*engine.StagePlan{{Address: "data_prep.a", Config: json.RawMessage(`{"seed":1}`)}}}
	new := &engine.Plan{Stages: []*engine.StagePlan{{Address: "data_prep.a", Config: json.RawMessage(`{"seed":2}`)}}}
	tests := map[string]struct {
		terminal bool
		environ  []string
		format   string
		noColor  bool
		want     bool
	}{
		"terminal":           {terminal: true, format: formatHuman, want: true},
		"pipe":               {format: formatHuman},
		"NO_COLOR":           {terminal: true, environ: []string{"NO_COLOR="}, format: formatHuman},
		"-no-color":          {terminal: true, format: formatHuman, noColor: true},
		"markdown on a tty":  {terminal: true, format: formatMarkdown},
		"json on a terminal": {terminal: true, format: formatJSON},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			env := &cliEnv{stdout: &stdout, stderr: &stderr, environ: tc.environ, isTerminal: tc.terminal}
			if code := showDiff(env, compare(old, "a", new, "b"), tc.format, tc.noColor); code != exitChanges {
				t.Fatalf("exit %d, want %d", code, exitChanges)
			}
			if got := strings.Contains(stdout.String(), "\x1b["); got != tc.want {
				t.Errorf("colour %v, want %v:\n%q", got, tc.want, stdout.String())
			}
		})
	}
}

func TestLineChanges(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		old, new       string
		removed, added int
	}{
		"same":             {old: "a\nb\n", new: "a\nb\n"},
		"one line changed": {old: "#SBATCH -t 60\nsrun x\n", new: "#SBATCH -t 120\nsrun x\n", removed: 1, added: 1},
		"moved line":       {old: "a\nb\n", new: "b\na\n"},
		"line added":       {old: "a\n", new: "a\nexport X=1\n", added: 1},
		"repeated lines":   {old: "x\nx\nx\n", new: "x\n", removed: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			removed, added := lineChanges(tc.old, tc.new)
			if removed != tc.removed || added != tc.added {
				t.Errorf("got %d removed, %d added; want %d, %d", removed, added, tc.removed, tc.added)
			}
		})
	}
}

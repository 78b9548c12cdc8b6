package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// gitPrefix starts a diff side read from git: git:REF:PATH.
const gitPrefix = "git:"

// gitSource is a file or folder at a git ref.
type gitSource struct{ ref, path string }

// parseGitSource splits git:REF:PATH. A ref cannot hold a colon (git
// check-ref-format forbids it), so the first colon after REF ends it.
func parseGitSource(s string) (gitSource, error) {
	ref, p, ok := strings.Cut(strings.TrimPrefix(s, gitPrefix), ":")
	if !ok || ref == "" || p == "" {
		return gitSource{}, errors.New("write a git side as git:REF:PATH, e.g. git:HEAD~1:workloads/x.hcl or git:main:workloads/x")
	}
	return gitSource{ref: ref, path: p}, nil
}

// checkoutGit copies PATH as it was at REF into a new temporary
// directory, under the same path relative to the repository root, and
// returns where it lies there and how to remove it. A folder is copied
// without its subfolders, as a workload folder is read. PATH is taken
// relative to the current directory first, then to the repository root.
func checkoutGit(ctx context.Context, dir string, src gitSource) (string, func(), error) {
	g := gitRunner{ctx: ctx, dir: dir}
	root, err := g.text("rev-parse", "--show-toplevel")
	if err != nil {
		return "", nil, fmt.Errorf("cannot read from git here: %v", err)
	}
	commit, err := g.text("rev-parse", "--verify", "--quiet", "--end-of-options", src.ref+"^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("git ref %q names no commit in the repository at %s (try a branch, tag, commit or HEAD~1)", src.ref, root)
	}
	prefix, err := g.text("rev-parse", "--show-prefix")
	if err != nil {
		return "", nil, err
	}
	// From here on paths are the repository's: git ls-tree run in a
	// subfolder would list only what lies under it.
	g.dir = root
	rel, kind, err := g.find(commit, src, gitCandidates(root, prefix, src.path))
	if err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp("", "gpuflow-diff-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	dest := filepath.Join(tmp, filepath.FromSlash(rel))
	if kind == "tree" {
		err = g.copyTree(gitObject(commit, rel), dest)
	} else {
		err = g.copyBlob(gitObject(commit, rel), dest)
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dest, cleanup, nil
}

// gitCandidates lists the repository paths PATH may mean, most likely
// first: from the current directory (prefix is its path in the
// repository), then from the root. A path starting with ./ or ../ means
// the current directory only; an absolute path is made relative to root.
func gitCandidates(root, prefix, p string) []string {
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		return inRepo(filepath.ToSlash(rel))
	}
	p = filepath.ToSlash(p)
	fromCwd := inRepo(path.Join(prefix, p))
	if prefix == "" || p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return fromCwd
	}
	return append(fromCwd, inRepo(path.Clean(p))...)
}

// inRepo keeps a cleaned repository path unless it leaves the repository.
func inRepo(p string) []string {
	if p == ".." || strings.HasPrefix(p, "../") {
		return nil
	}
	return []string{p}
}

// gitObject names a repository path at a commit; "COMMIT:" is the root.
func gitObject(commit, rel string) string {
	if rel == "." {
		rel = ""
	}
	return commit + ":" + rel
}

// gitRunner runs git in one directory.
type gitRunner struct {
	ctx context.Context
	dir string
}

func (g gitRunner) run(args ...string) ([]byte, error) {
	cmd := exec.CommandContext(g.ctx, "git", args...)
	cmd.Dir = g.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			first, _, _ := strings.Cut(msg, "\n")
			return nil, fmt.Errorf("git %s: %s", args[0], first)
		}
		return nil, fmt.Errorf("git %s: %v", args[0], err)
	}
	return out, nil
}

func (g gitRunner) text(args ...string) (string, error) {
	out, err := g.run(args...)
	return strings.TrimSpace(string(out)), err
}

// find returns the first candidate that exists at commit, and whether it
// is a file (blob) or a folder (tree).
func (g gitRunner) find(commit string, src gitSource, candidates []string) (string, string, error) {
	for _, c := range candidates {
		kind, err := g.text("cat-file", "-t", gitObject(commit, c))
		switch {
		case err != nil:
			continue
		case kind == "blob" || kind == "tree":
			return c, kind, nil
		default:
			return "", "", fmt.Errorf("%s at %s is a %s, not a file or folder", c, src.ref, kind)
		}
	}
	if len(candidates) == 0 {
		return "", "", fmt.Errorf("%s is outside the git repository", src.path)
	}
	return "", "", fmt.Errorf("%s does not exist at %s: looked for %s in the repository",
		src.path, src.ref, strings.Join(quoteAll(candidates), " and "))
}

func (g gitRunner) copyBlob(object, dest string) error {
	b, err := g.run("cat-file", "blob", object)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dest, b, 0o644)
}

// copyTree copies a folder's files, not its subfolders, links or
// submodules.
func (g gitRunner) copyTree(object, dest string) error {
	out, err := g.run("ls-tree", "-z", object)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	for _, entry := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		meta, name, ok := strings.Cut(entry, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 || fields[1] != "blob" || fields[0] == "120000" {
			continue
		}
		if err := g.copyBlob(fields[2], filepath.Join(dest, name)); err != nil {
			return err
		}
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

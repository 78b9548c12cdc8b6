package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// developmentWords are phrases that mean something only to those who build
// gpuflow: where its reference material lives, the machines it was measured
// on as they were handed out, its issue tracker. A user reads none of them
// in what ships (code, comments, docs, workloads, profiles, goldens); a
// source is cited by its public title in docs/references.md instead.
var developmentWords = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`\blent\b`,
	`KINDS\.md`,
	`/work/`,
	`\.library/`,
	`shared/reference`,
	`\bissues? #?[0-9]`,
	`\bsessions?\b`,
	`device (tool|calls?)`,
	`the issue's`,
	`measured\.md`,
	`(b300-xe9780-system-guide|nebius-h100-cluster-guide|nebius-h100-16gpu-readme|distributed-networking-notes|b200-8gpu-communication-chapter)\.md`,
}, "|"))

// TestNoDevelopmentWords scans every tracked file for developmentWords.
func TestNoDevelopmentWords(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	self := filepath.ToSlash(filepath.Join("cmd", "gpuflow", "wording_test.go"))
	var found []string
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if name == self {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(src, []byte("\n")) {
			if m := developmentWords.Find(line); m != nil {
				found = append(found, fmt.Sprintf("%s:%d: %q", name, i+1, m))
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("%d line(s) speak of how gpuflow is developed; say it in the user's terms or cite docs/references.md:\n%s",
			len(found), strings.Join(found, "\n"))
	}
}

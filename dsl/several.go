package dsl

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// severalWorkloads tells a directory of independent workloads from one
// workload split over files: when every file declares stages of its own
// and two files declare the same block, the files are separate workloads
// put side by side (as an examples folder is), and one diagnostic says so
// and how to check them, in place of an error for every repeated name.
func severalWorkloads(dir string, files []*hcl.File) *hcl.Diagnostic {
	if len(files) < 2 {
		return nil
	}
	first := map[string]hcl.Range{}
	var repeat *hcl.Block
	var firstRange hcl.Range
	for _, f := range files {
		content, _, _ := f.Body.PartialContent(fileSchema)
		if !declaresStage(content) {
			return nil
		}
		for _, b := range content.Blocks {
			key := blockKey(b)
			r, seen := first[key]
			switch {
			case b.Type == blockLocals:
			case !seen:
				first[key] = b.DefRange
			case repeat == nil && r.Filename != b.DefRange.Filename:
				repeat, firstRange = b, r
			}
		}
	}
	if repeat == nil {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Several workloads in one directory",
		Detail: fmt.Sprintf("A directory is read as one workload, but the %d .hcl files in %s each declare their own stages and repeat each other's names "+
			"(%s here and in %s), so they are %d independent workloads. Check each on its own by passing the files as separate paths: "+
			"gpuflow validate %s (plan and fmt take several paths too).",
			len(files), dir, blockKey(repeat), filepath.Base(firstRange.Filename), len(files), filepath.Join(dir, "*.hcl")),
		Subject: repeat.DefRange.Ptr(),
	}
}

func declaresStage(content *hcl.BodyContent) bool {
	for _, b := range content.Blocks {
		if b.Type == blockStage {
			return true
		}
	}
	return false
}

// blockKey names a block as it is written: type and quoted labels.
func blockKey(b *hcl.Block) string {
	key := b.Type
	for _, l := range b.Labels {
		key += fmt.Sprintf(" %q", l)
	}
	return strings.TrimSpace(key)
}

package engine

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/api/digest"
)

// inputFile is a file a stage reads, as its contract names it
// (StageContract.Files), with the digest of its bytes.
type inputFile struct {
	attr   string // multiple_choice.path
	sha256 string
}

// inputFiles hashes the files the stage's contract names, where the body
// gives them a known path (relative paths start at dir), in the
// contract's order. A file that cannot be read is an error at its
// attribute: the stage's input hash would not cover it.
func inputFiles(n *stageNode, config cty.Value, dir string) ([]inputFile, hcl.Diagnostics) {
	if n.plugin.Contract == nil {
		return nil, nil
	}
	var files []inputFile
	var diags api.Diagnostics
	for _, attr := range n.plugin.Contract.Files {
		at := attrPath(attr)
		path, ok := knownString(config, at)
		if !ok {
			continue
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		sum, err := digest.File(path)
		if err != nil {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Unreadable " + attr, Path: at,
				Detail: fmt.Sprintf("gpuflow hashes this file's contents into the stage's input hash, so that editing it runs the stage again, and cannot read it: %v. Point %s at an existing file.", err, attr)})
			continue
		}
		files = append(files, inputFile{attr: attr, sha256: sum})
	}
	return files, api.ToHCL(diags, n.cfg.Body, n.spec)
}

// attrPath turns a contract's BLOCK.ATTR into a path into the body.
func attrPath(attr string) cty.Path {
	var p cty.Path
	for _, name := range strings.Split(attr, ".") {
		p = p.GetAttr(name)
	}
	return p
}

// knownString is the non-empty string at path in config, where every step
// of the path is there and known.
func knownString(config cty.Value, path cty.Path) (string, bool) {
	v, err := path.Apply(config)
	if err != nil {
		return "", false
	}
	v, _ = v.Unmark()
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String || v.AsString() == "" {
		return "", false
	}
	return v.AsString(), true
}

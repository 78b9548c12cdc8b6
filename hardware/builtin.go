package hardware

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// profileFiles holds one built-in profile per file, named for the profile.
//
//go:embed profiles/*.hcl
var profileFiles embed.FS

// builtin is a parsed built-in profile and the arguments its file sets.
type builtin struct {
	profile *Profile
	present presence
}

// builtins are the embedded profiles, parsed on first use.
var builtins = newEmbeddedSet(BuiltinNames, loadBuiltin, errNoSuchProfile)

// Builtin returns a copy of the built-in profile called name.
func Builtin(name string) (*Profile, error) {
	b, err := builtinEntry(name)
	if err != nil {
		return nil, err
	}
	return b.profile.clone(), nil
}

// BuiltinNames lists the built-in profiles, sorted.
func BuiltinNames() []string {
	files, _ := fs.Glob(profileFiles, "profiles/*.hcl") // the pattern is valid
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(path.Base(f), ".hcl")
	}
	slices.Sort(names)
	return names
}

var errNoSuchProfile = errors.New("no built-in hardware profile")

func builtinEntry(name string) (builtin, error) {
	return builtins.entry(name)
}

// loadBuiltin decodes profiles/NAME.hcl, which must hold exactly one
// hardware "NAME" block declared inline.
func loadBuiltin(name string) (builtin, error) {
	body, err := readBlock(profileFiles, "profiles", "hardware", name)
	if err != nil {
		return builtin{}, err
	}
	p, present, diags := decode(name, body, nil, nil)
	if diags.HasErrors() {
		return builtin{}, diags
	}
	return builtin{profile: p, present: present}, nil
}

// readBlock parses DIR/NAME.hcl of files, which must hold exactly one
// block of type kind labelled NAME, and returns that block's body.
func readBlock(files embed.FS, dir, kind, name string) (hcl.Body, error) {
	filename := dir + "/" + name + ".hcl"
	src, err := files.ReadFile(filename)
	if err != nil {
		return nil, err
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	schema := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: kind, LabelNames: []string{"name"}}}}
	content, diags := file.Body.Content(schema)
	if diags.HasErrors() {
		return nil, diags
	}
	if len(content.Blocks) != 1 || content.Blocks[0].Labels[0] != name {
		return nil, fmt.Errorf("%s: want exactly one %s %q block", filename, kind, name)
	}
	return content.Blocks[0].Body, nil
}

// clone copies p deeply enough that changing the copy leaves p alone.
func (p *Profile) clone() *Profile {
	c := *p
	c.GPU = p.GPU.clone()
	return &c
}

func (s presence) clone() presence { return maps.Clone(s) }

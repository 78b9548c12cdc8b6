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
	"github.com/zclconf/go-cty/cty"
)

// datasheetFiles holds the GPU catalogue: one datasheet per file, named
// for the entry, which a gpu block names with datasheet = "NAME".
//
//go:embed gpus/*.hcl
var datasheetFiles embed.FS

// attrDatasheet names the catalogue entry a gpu block starts from.
const attrDatasheet = "datasheet"

// datasheet is one GPU of the catalogue and the gpu arguments it sets.
type datasheet struct {
	gpu     GPU
	present presence
}

// datasheets are the embedded GPU datasheets, parsed on first use.
var datasheets = newEmbeddedSet(DatasheetNames, loadDatasheet, errNoSuchDatasheet)

var errNoSuchDatasheet = errors.New("no GPU datasheet")

// DatasheetNames lists the GPU catalogue's entries, sorted.
func DatasheetNames() []string {
	files, _ := fs.Glob(datasheetFiles, "gpus/*.hcl") // the pattern is valid
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(path.Base(f), ".hcl")
	}
	slices.Sort(names)
	return names
}

// Datasheet returns the catalogue's figures for one GPU, with PerNode 0.
func Datasheet(name string) (GPU, error) {
	d, err := datasheetEntry(name)
	if err != nil {
		return GPU{}, err
	}
	return d.gpu.clone(), nil
}

func datasheetEntry(name string) (datasheet, error) {
	return datasheets.entry(name)
}

// datasheetRequired are the gpu arguments every catalogue entry sets, so
// that naming one satisfies what an inline gpu block must declare.
var datasheetRequired = []string{"gpu.model", "gpu.memory_gib", "gpu.hbm_tbps"}

// loadDatasheet decodes gpus/NAME.hcl, which must hold exactly one
// gpu "NAME" block with the figures of one GPU and no count.
func loadDatasheet(name string) (datasheet, error) {
	body, err := readBlock(datasheetFiles, "gpus", "gpu", name)
	if err != nil {
		return datasheet{}, err
	}
	decl := declaration{body: body, attrs: map[string]*hcl.Attribute{}, blocks: map[string]*hcl.Block{}}
	if diags := decl.read(body, blockGPU); diags.HasErrors() {
		return datasheet{}, diags
	}
	for _, banned := range []string{"gpu.count", "gpu." + attrDatasheet} {
		if decl.attrs[banned] != nil {
			return datasheet{}, fmt.Errorf("gpus/%s.hcl: a datasheet describes one GPU; %s belongs to a profile", name, banned)
		}
	}
	p, present := &Profile{}, presence{}
	if diags := assignAll(p, present, decl, nil); diags.HasErrors() {
		return datasheet{}, diags
	}
	if err := checkDatasheet(p.GPU, present); err != nil {
		return datasheet{}, fmt.Errorf("gpus/%s.hcl: %w", name, err)
	}
	p.GPU.Datasheet = name
	return datasheet{gpu: p.GPU, present: present}, nil
}

func checkDatasheet(g GPU, present presence) error {
	for _, need := range datasheetRequired {
		if !present[need] {
			return fmt.Errorf("%s is missing", need)
		}
	}
	if len(g.TFLOPS) == 0 {
		return errors.New("no TFLOP/s rating")
	}
	return nil
}

// applyDatasheet replaces p's GPU figures with those of the catalogue
// entry the gpu block names, keeping the count; the block's own arguments
// then override single figures. A profile's figures of another GPU do not
// survive: the datasheet's TFLOP/s ratings replace them all.
func applyDatasheet(p *Profile, present presence, decl declaration, ctx *hcl.EvalContext) hcl.Diagnostics {
	attr := decl.attrs[joinPath(blockGPU, attrDatasheet)]
	if attr == nil {
		return nil
	}
	v, diags := evaluate(attr, cty.String, ctx)
	if v == cty.NilVal {
		return diags
	}
	d, err := datasheetEntry(v.AsString())
	switch {
	case errors.Is(err, errNoSuchDatasheet):
		return append(diags, unknownDatasheet(v.AsString(), attr))
	case err != nil: // a broken embedded file: a bug here, not the user's
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "GPU catalogue failed to load",
			Detail:   fmt.Sprintf("This is a bug in gpuflow; please report it: %s.", err),
			Subject:  attr.Expr.Range().Ptr(),
		})
	}
	perNode := p.GPU.PerNode
	p.GPU = d.gpu.clone()
	p.GPU.PerNode = perNode
	for path := range present {
		if strings.HasPrefix(path, blockGPU+".") && path != "gpu.count" {
			delete(present, path)
		}
	}
	maps.Copy(present, d.present)
	return diags
}

func unknownDatasheet(name string, attr *hcl.Attribute) *hcl.Diagnostic {
	names := DatasheetNames()
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Unknown GPU datasheet",
		Detail: fmt.Sprintf("The GPU catalogue has no datasheet named %q.%s Datasheets: %s.",
			name, didYouMean(name, names), quoteAll(names)),
		Subject: attr.Expr.Range().Ptr(),
	}
}

func (g GPU) clone() GPU {
	g.TFLOPS = maps.Clone(g.TFLOPS)
	return g
}

package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// defaultEvalBatches is how many global batches a validation reads when
// eval_batches is not set.
const defaultEvalBatches = 8

// validSplit is the split a data_prep stage writes for validation, and
// dataprepManifest the file in its output folder that lists the shards of
// every split.
const (
	validSplit       = "valid"
	dataprepManifest = "manifest.json"
)

// validation sets what the trainer validates on and how often: valid_data
// when given, else the valid split that the data_prep stage wrote beside
// the training shards. A stage with neither trains without validation.
func validation(args stageArgs, workDir string, cfg *runConfig) api.Diagnostics {
	cfg.EvalEvery = int64(value(args.EvalEvery))
	cfg.EvalBatches = int64(args.EvalBatches)
	if !args.ValidData.IsNull() {
		prefixes, err := dataPrefixes(args.ValidData, workDir)
		cfg.ValidData = prefixes
		if err != nil {
			return api.Diagnostics{{Severity: api.Error, Summary: "Validation data not found", Path: cty.GetAttrPath("valid_data"),
				Detail: fmt.Sprintf("The valid_data argument cannot be read as Megatron shards: %s.", err)}}
		}
		return nil
	}
	prefixes, err := splitBeside(cfg.Data, validSplit)
	if err != nil {
		return api.Diagnostics{{Severity: api.Error, Summary: "Cannot read the validation split", Path: cty.GetAttrPath("data"),
			Detail: fmt.Sprintf("%s. Set valid_data to the validation shards.", err)}}
	}
	cfg.ValidData = prefixes
	if len(prefixes) == 0 && cfg.EvalEvery > 0 {
		return api.Diagnostics{{Severity: api.Warning, Summary: "No validation data", Path: cty.GetAttrPath("eval_every"),
			Detail: "eval_every is set, but no valid split was found beside the training shards (their data_prep stage wrote none, or the data are not a data_prep stage's), so the stage trains without validation. Give the data_prep stage a split { valid = ... }, or set valid_data."}}
	}
	return nil
}

// validateValidationCounts: eval_every and eval_batches count steps and batches, so
// they are whole numbers (validate checks that they are above zero).
func validateValidationCounts(args stageArgs) api.Diagnostics {
	var diags api.Diagnostics
	for _, c := range []struct {
		attr string
		v    float64
	}{{"eval_every", value(args.EvalEvery)}, {"eval_batches", args.EvalBatches}} {
		if attr, v := c.attr, c.v; v != math.Trunc(v) {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid " + attr, Path: cty.GetAttrPath(attr),
				Detail: fmt.Sprintf("%s must be a whole number, such as %s.", attr, strconv.FormatFloat(v, 'f', 0, 64))})
		}
	}
	return diags
}

// manifestSplits is the part of a data_prep manifest that names each
// group's shards per split, relative to its folder.
type manifestSplits struct {
	Groups []struct {
		Splits map[string]struct {
			Megatron string `json:"megatron"`
		} `json:"splits"`
	} `json:"groups"`
}

// splitBeside finds the Megatron shards of split in the manifests of the
// folders that hold the given shards; none where no folder has a manifest.
func splitBeside(shards []string, split string) ([]string, error) {
	var dirs, out []string
	for _, p := range shards {
		dirs = append(dirs, filepath.Dir(p))
	}
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) {
		found, err := manifestSplit(dir, split)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return checkShards(out)
}

func manifestSplit(dir, split string) ([]string, error) {
	path := filepath.Join(dir, dataprepManifest)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m manifestSplits
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, g := range m.Groups {
		if s, ok := g.Splits[split]; ok && s.Megatron != "" {
			out = append(out, filepath.Join(dir, s.Megatron))
		}
	}
	return out, nil
}

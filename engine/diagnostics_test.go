package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
	"github.com/gpuflow/gpuflow/plugins/train"
)

// TestInvalidFixtures plans every workload in testdata/invalid and compares
// its error diagnostics with the "# want: LINE:COL SUMMARY" lines at the top
// of the file, in source order. A "# detail: TEXT" line asks that some
// error's Detail contain TEXT. Every diagnostic must also carry a Subject
// in the fixture and a Detail that is a full sentence.
func TestInvalidFixtures(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 30 {
		t.Fatalf("found %d invalid fixtures; the suite is meant to hold at least 30", len(paths))
	}
	plugins := testPlugins(t)
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".hcl"), func(t *testing.T) {
			t.Parallel()
			want, details := readWants(t, path)
			diags := planFile(path, plugins)
			if diff := cmp.Diff(want, errorLines(diags)); diff != "" {
				t.Errorf("error diagnostics differ (-want +got):\n%s\nall diagnostics:\n%s", diff, describe(diags))
			}
			for _, text := range details {
				if !anyDetailContains(diags, text) {
					t.Errorf("no diagnostic detail contains %q; all diagnostics:\n%s", text, describe(diags))
				}
			}
			for _, problem := range diagnosticProblems(diags, path) {
				t.Error(problem)
			}
		})
	}
}

// planFile loads and plans one workload file as gpuflow plan does,
// returning every diagnostic: when loading fails, the stages are still
// checked, so that one run reports every error a file has.
func planFile(path string, plugins engine.Plugins) hcl.Diagnostics {
	ctx := context.Background()
	w, diags := engine.LoadWorkload(path, dsl.Inputs{})
	if diags.HasErrors() {
		return append(diags, w.CheckStages(ctx, plugins)...)
	}
	_, pdiags := engine.BuildPlan(ctx, w, engine.PlanOptions{Plugins: plugins})
	return append(diags, pdiags...)
}

// readWants returns the fixture's "# want:" lines as "FILE:LINE:COL:
// SUMMARY", and the text of its "# detail:" lines.
func readWants(t *testing.T, path string) (want, details []string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if text, ok := strings.CutPrefix(line, "# detail: "); ok {
			details = append(details, text)
			continue
		}
		rest, isWant := strings.CutPrefix(line, "# want:")
		if !isWant {
			continue
		}
		pos, summary, ok := strings.Cut(strings.TrimSpace(rest), " ")
		if !ok {
			t.Fatalf("%s: malformed want line %q; write # want: LINE:COL SUMMARY", path, line)
		}
		want = append(want, fmt.Sprintf("%s:%s: %s", filepath.Base(path), pos, summary))
	}
	if len(want) == 0 {
		t.Fatalf("%s declares no # want: lines", path)
	}
	return want, details
}

func anyDetailContains(diags hcl.Diagnostics, text string) bool {
	for _, d := range diags {
		if strings.Contains(d.Detail, text) {
			return true
		}
	}
	return false
}

// errorLines lists error diagnostics as "FILE:LINE:COL: SUMMARY" in source
// order; an error without a Subject prints as "-:0:0".
func errorLines(diags hcl.Diagnostics) []string {
	var errs hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return subjectByte(errs[i]) < subjectByte(errs[j]) })
	var out []string
	for _, d := range errs {
		file, line, col := "-", 0, 0
		if d.Subject != nil {
			file, line, col = filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column
		}
		out = append(out, fmt.Sprintf("%s:%d:%d: %s", file, line, col, d.Summary))
	}
	return out
}

func subjectByte(d *hcl.Diagnostic) int {
	if d.Subject == nil {
		return -1
	}
	return d.Subject.Start.Byte
}

// diagnosticProblems lists the ways diagnostics fall short of the project's
// rule: a Subject in the file, a non-empty range, a full-sentence Detail.
func diagnosticProblems(diags hcl.Diagnostics, path string) []string {
	var out []string
	for _, d := range diags {
		switch {
		case d.Subject == nil:
			out = append(out, fmt.Sprintf("%q has no Subject", d.Summary))
		case d.Subject.Filename != path:
			out = append(out, fmt.Sprintf("%q points into %q, not the fixture", d.Summary, d.Subject.Filename))
		case d.Subject.End.Byte < d.Subject.Start.Byte:
			out = append(out, fmt.Sprintf("%q has a backwards range %s", d.Summary, d.Subject))
		}
		if !strings.HasSuffix(strings.TrimSpace(d.Detail), ".") && !strings.HasSuffix(strings.TrimSpace(d.Detail), "?") {
			out = append(out, fmt.Sprintf("%q has detail %q, not a sentence", d.Summary, d.Detail))
		}
	}
	return out
}

func describe(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "  %s: %s: %s\n", d.Subject, d.Summary, d.Detail)
	}
	return b.String()
}

// testPlugins serves the train plugin's stage types and "probe".
func testPlugins(t testing.TB) engine.Plugins {
	t.Helper()
	set, err := engine.NewPluginSet(context.Background(), train.Provider{}, probeProvider{})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// probeProvider serves the stage type "probe": a small body whose fields
// exercise references, types and plugin diagnostics without a training
// stage's required arguments; and "note", a stage type without a
// contract, which takes no meta-arguments.
type probeProvider struct{}

func (probeProvider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{Name: "probe", Version: "0.0.1", StageTypes: map[string]*api.BlockSchema{
		"probe": {
			Attributes: map[string]*api.Attribute{
				"input": {Type: cty.DynamicPseudoType},
				"count": {Type: cty.Number},
				"ratio": {Type: cty.Number},
			},
			Blocks: map[string]*api.NestedBlock{
				"check": {Nesting: api.NestingList, Block: api.BlockSchema{
					Attributes: map[string]*api.Attribute{"limit": {Type: cty.Number, Required: true}},
				}},
			},
		},
		"note": {Attributes: map[string]*api.Attribute{"text": {Type: cty.String}}},
	}, Contracts: map[string]*api.StageContract{"probe": {
		MetaArguments: []api.MetaArgument{{Name: api.MetaHardware}, {Name: api.MetaModel}, {Name: api.MetaLayout}},
		Estimate:      &api.EstimateInputs{Work: api.WorkTrain},
	}}}, nil
}

// probeArgs is what ValidateStage reads of a probe body; a value not known
// yet is left nil and not checked.
type probeArgs struct {
	Ratio  *float64 `cty:"ratio"`
	Checks []struct {
		Limit *float64 `cty:"limit"`
	} `cty:"check"`
}

// ValidateStage rejects a ratio outside [0, 1] and a negative check limit,
// pointing at them by path as an out-of-process plugin would.
func (probeProvider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	var args probeArgs
	diags := sdk.Decode(req.Config, &args)
	if r := args.Ratio; r != nil && (*r < 0 || *r > 1) {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid ratio",
			Detail: "ratio must lie between 0 and 1.", Path: cty.GetAttrPath("ratio")})
	}
	for i, c := range args.Checks {
		if c.Limit != nil && *c.Limit < 0 {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid check limit",
				Detail: "limit must be zero or more.", Path: cty.GetAttrPath("check").IndexInt(i).GetAttr("limit")})
		}
	}
	return diags, nil
}

func (probeProvider) PlanStage(context.Context, *api.StageRequest) (*api.PlanResponse, error) {
	return &api.PlanResponse{}, nil
}

func (probeProvider) ApplyStage(context.Context, *api.ApplyRequest, api.EventSink) (*api.ApplyResponse, error) {
	return &api.ApplyResponse{}, nil
}

func (probeProvider) Stop(context.Context) error { return nil }

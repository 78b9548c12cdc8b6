package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// labState is a real apply of workloads/h200-lab.hcl on one H200, trimmed
// (see testdata/lab-h200/README.md).
const labState = "testdata/lab-h200/.gpuflow/state/workloads_h200-lab.json"

func TestLabMarkdownGolden(t *testing.T) {
	r, err := Load(labState)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "lab-h200.md", b.Bytes())
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestLabHTMLCharts counts the charts each stage of the lab run draws: every
// figure is an <svg> with at least one drawn series.
func TestLabHTMLCharts(t *testing.T) {
	r, err := Load(labState)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range r.Sections {
		for _, f := range s.Figures {
			if !strings.Contains(SVG(f), `class="series"`) {
				t.Errorf("%s: figure %q draws no series", s.Address, f.Title)
			}
			got[s.Address] = append(got[s.Address], f.Title)
		}
	}
	want := map[string][]string{
		"benchmark.acceptance": {"NCCL algorithm bandwidth by message size", "GEMM TFLOP/s per GPU against the datasheet", "HBM bandwidth per GPU"},
		"finetune.small_lora":  {"Loss per step", "Throughput per step", "MFU per step", "Peak memory per rank"},
		"pretrain.small":       {"Loss per step", "Throughput per step", "MFU per step", "Peak memory per rank"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"<script", "http://", "https://"} {
		if n := strings.Count(b.String(), banned); n > 0 && !(banned == "http://" && n == strings.Count(b.String(), `xmlns="http://www.w3.org/2000/svg"`)) {
			t.Errorf("page holds %q %d times; it must open without a network", banned, n)
		}
	}
}

// TestLinesTableAlignsSeriesBySteps: a loss figure's table has a row per
// validation, each series' value at that step beside the others.
func TestLinesTableAlignsSeriesBySteps(t *testing.T) {
	f := Figure{Title: "Loss per step", XLabel: "step", YLabel: "loss", Series: []Series{
		{Name: "loss", X: []float64{1, 2, 3, 4}, Y: []float64{4, 3, 2, 1}},
		{Name: "valid_loss", X: []float64{2, 4}, Y: []float64{3.5, 1.5}},
	}}
	want := Table{Title: "Loss per step (loss)", Header: []string{"step", "loss", "valid_loss"},
		Rows: [][]string{{"2", num(3), num(3.5)}, {"4", num(1), num(1.5)}}}
	if diff := cmp.Diff(want, linesTable(f)); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

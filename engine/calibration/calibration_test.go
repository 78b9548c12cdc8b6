package calibration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	f := New()
	must(t, f.RecordGEMM("h200-x4", "bf16", 746.0/989))
	must(t, f.RecordBusBW("h200-x4", "nvlink", 342.9))
	must(t, f.RecordActivationCoefficient("h100-x1", "pytorch-eager", 2.18))
	must(t, f.RecordRun("h100-x1", Run{Key: "k1", TokensPerS: 33557, PeakMemoryBytes: 33500000000}))
	must(t, f.RecordRun("h100-x1", Run{Key: "k1", TokensPerS: 34000}))
	path := filepath.Join(t.TempDir(), "sub", "calibration.json")
	must(t, f.Save(path))
	got, err := Load(path)
	must(t, err)
	if diff := cmp.Diff(f, got); diff != "" {
		t.Errorf("round trip (-saved +loaded):\n%s", diff)
	}
	if n := len(got.For("h100-x1").Runs); n != 1 {
		t.Errorf("a run recorded twice under one key left %d runs, want 1", n)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	must(t, err)
	if len(entries) != 1 {
		t.Errorf("save left %d files in its directory, want only the calibration file", len(entries))
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	t.Parallel()
	f, err := Load(filepath.Join(t.TempDir(), "none.json"))
	must(t, err)
	if diff := cmp.Diff(New(), f); diff != "" {
		t.Errorf("missing file (-want +got):\n%s", diff)
	}
	if f.For("x") != nil {
		t.Error("empty file has figures for a profile")
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		data string
		want string
	}{
		"newer version":    {`{"format_version": 2, "profiles": {}}`, "newer gpuflow"},
		"no version":       {`{"profiles": {}}`, "no format_version"},
		"zero version":     {`{"format_version": 0}`, "not a calibration format"},
		"not json":         {`calibration`, "not a calibration file"},
		"wrong field type": {`{"format_version": 1, "profiles": {"a": {"runs": 3}}}`, "cal.json"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.data), "cal.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRecordRejectsNonsense(t *testing.T) {
	t.Parallel()
	f := New()
	tests := map[string]error{
		"efficiency over 1":    f.RecordGEMM("p", "bf16", 1.2),
		"zero bandwidth":       f.RecordBusBW("p", "nvlink", 0),
		"negative coefficient": f.RecordActivationCoefficient("p", "megatron", -1),
		"run with no figures":  f.RecordRun("p", Run{Key: "k"}),
	}
	for name, err := range tests {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(f.Profiles) != 0 {
		t.Errorf("rejected records still created profiles: %v", f.Profiles)
	}
}

func TestRunKeyDistinguishesConfigurations(t *testing.T) {
	t.Parallel()
	s, err := model.Preset("llama3.2-1b")
	must(t, err)
	l := layout.Layout{TP: 1, PP: 1, DP: 1, CP: 1, MicroBatch: 1, GlobalBatch: 1, Recompute: "none", Precision: "bf16"}
	base := RunKey("pytorch-eager", "", s, l)
	l2 := l
	l2.MicroBatch = 2
	s2 := s
	s2.SeqLen = 4096
	for name, k := range map[string]string{
		"micro batch": RunKey("pytorch-eager", "", s, l2),
		"seq len":     RunKey("pytorch-eager", "", s2, l),
		"framework":   RunKey("megatron", "", s, l),
	} {
		if k == base {
			t.Errorf("changing %s kept the key %q", name, k)
		}
	}
	l3 := l
	l3.VP = 1
	if RunKey("pytorch-eager", "", s, l3) != base {
		t.Error("vp = 0 and vp = 1 (the same schedule) gave different keys")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

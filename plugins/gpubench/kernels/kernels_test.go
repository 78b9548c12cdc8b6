package kernels

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPTXExportsEveryKernel(t *testing.T) {
	t.Parallel()
	entries := regexp.MustCompile(`\.visible \.entry (\w+)\(`).FindAllStringSubmatch(ptx, -1)
	var got []string
	for _, e := range entries {
		got = append(got, e[1])
	}
	want := []string{FillRandom, CountRandomWrong, Triad, CountTriadWrong, FillPattern, CheckPattern, GEMMSample}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kernel entries (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(PTX(), "\x00") {
		t.Error("PTX() lacks the terminating NUL cuModuleLoadData needs")
	}
}

// Drivers reject PTX of a newer ISA than their own, so the committed file
// must stay at ISA 7.0 (CUDA 11.0).
func TestPTXISAVersion(t *testing.T) {
	t.Parallel()
	m := regexp.MustCompile(`(?m)^\.version (\d+\.\d+)$`).FindStringSubmatch(ptx)
	if m == nil || m[1] != "7.0" {
		t.Fatalf(".version line = %v, want 7.0", m)
	}
}

// TestPTXUpToDate regenerates the PTX where clang is installed and fails if
// the committed file differs from what kernels.cu gives.
func TestPTXUpToDate(t *testing.T) {
	clang, err := exec.LookPath("clang-14")
	if err != nil {
		t.Skip("clang-14 not installed; cannot regenerate kernels.ptx")
	}
	out := filepath.Join(t.TempDir(), "kernels.ptx")
	cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80",
		"-nocudainc", "-nocudalib", "-O3", "-S", "-o", out, "kernels.cu")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, msg)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(fresh) != ptx {
		t.Error("kernels.ptx is stale: run ./gen.sh in plugins/gpubench/kernels")
	}
}

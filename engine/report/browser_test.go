package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// requireBrowser makes the browser test fail instead of skipping when
// chromium is missing; CI sets it after installing chromium.
const requireBrowser = "GPUFLOW_REQUIRE_CHROMIUM"

// screenshotEnv names a file to keep the screenshot in; without it the
// screenshot goes to the test's temporary folder.
const screenshotEnv = "GPUFLOW_REPORT_SCREENSHOT"

// TestReportInBrowser opens the lab run's report in headless chromium:
// every figure must be an <svg> with drawn series in the DOM chromium
// built, the page must log no console message, and a screenshot is saved.
func TestReportInBrowser(t *testing.T) {
	browser := findChromium(t)
	r, err := Load(labState)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := runChromium(t, browser, dir, "--dump-dom", "file://"+page)
	figures := 0
	for _, s := range r.Sections {
		figures += len(s.Figures)
	}
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(dom, -1)
	if len(svgs) != figures {
		t.Errorf("chromium's DOM holds %d <svg> charts; the report has %d figures", len(svgs), figures)
	}
	for i, svg := range svgs {
		if !strings.Contains(svg, `class="series"`) {
			t.Errorf("chart %d draws no series", i+1)
		}
	}
	if strings.Contains(stderr, "CONSOLE") {
		t.Errorf("the page logged to the console:\n%s", stderr)
	}
	shot := os.Getenv(screenshotEnv)
	if shot == "" {
		shot = filepath.Join(dir, "report.png")
	}
	runChromium(t, browser, dir, "--hide-scrollbars", "--window-size=1000,2600", "--screenshot="+shot, "file://"+page)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv(requireBrowser) != "" {
		t.Fatalf("chromium is not installed and %s is set", requireBrowser)
	}
	t.Skipf("chromium is not installed (apt-get install chromium), so the report is not checked in a browser; set %s to fail instead", requireBrowser)
	return ""
}

// runChromium runs headless chromium with a fresh profile and nothing
// reaching out to the network, returning its stdout and stderr.
func runChromium(t *testing.T, browser, dir string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--enable-logging=stderr", "--v=0", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

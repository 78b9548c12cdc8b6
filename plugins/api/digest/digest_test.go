package digest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// large spans many of io.Copy's reads, so that the stream is hashed whole.
var large = bytes.Repeat([]byte("gpuflow\n"), 1<<16)

func TestFile(t *testing.T) {
	t.Parallel()
	largeSum := sha256.Sum256(large)
	tests := map[string]struct {
		contents []byte
		want     string
	}{
		// The empty input's digest and FIPS 180-2's example "abc".
		"empty": {[]byte{}, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		"abc":   {[]byte("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		"large": {large, hex.EncodeToString(largeSum[:])},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, tc.contents, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := File(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("File (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFileRefuses: what is not a readable regular file is an error that
// names the path, and no digest.
func TestFileRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		path func(dir string) string
		want string
	}{
		"missing":   {func(dir string) string { return filepath.Join(dir, "absent") }, "no such file"},
		"directory": {func(dir string) string { return dir }, "is not a file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := tc.path(t.TempDir())
			got, err := File(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("File(%s) error %v, want one naming the path and %q", path, err, tc.want)
			}
			if got != "" {
				t.Errorf("File(%s) = %q with an error, want no digest", path, got)
			}
		})
	}
}

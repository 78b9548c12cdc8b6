package shard

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var testDocs = [][]uint32{{1, 2, 3}, {}, {65535}, {7, 8}}

func TestMegatronRoundTrip(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		dtype DType
		docs  [][]uint32
	}{
		"uint16":     {dtype: Uint16, docs: testDocs},
		"int32":      {dtype: Int32, docs: [][]uint32{{100000, 0}, {199999}}},
		"uint8 mask": {dtype: Uint8, docs: [][]uint32{{0, 0, 1}, {}, {1}}},
		"no records": {dtype: Uint16, docs: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := filepath.Join(t.TempDir(), "train_00000")
			w, err := CreateMegatron(prefix, tc.dtype)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range tc.docs {
				if err := w.Add(d); err != nil {
					t.Fatal(err)
				}
			}
			wantBytes := w.Bytes()
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			ds, err := ReadMegatron(prefix)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]uint32
			for k := range ds.Documents() {
				got = append(got, ds.Document(k))
			}
			if diff := cmp.Diff(tc.docs, got, cmpEmptyIsNil); diff != "" {
				t.Errorf("documents (-written +read):\n%s", diff)
			}
			if got := fileSize(t, prefix+".bin") + fileSize(t, prefix+".idx"); got != wantBytes {
				t.Errorf("Bytes() = %d, files hold %d", wantBytes, got)
			}
			checkNoTemp(t, filepath.Dir(prefix))
		})
	}
}

var cmpEmptyIsNil = cmp.FilterValues(func(x, y []uint32) bool { return len(x) == 0 && len(y) == 0 }, cmp.Ignore())

// TestMegatronGolden pins the exact bytes of a small indexed dataset, so a
// change of layout shows in review; scripts/device/shard_check.py reads the
// same files with numpy.
func TestMegatronGolden(t *testing.T) {
	t.Parallel()
	prefix := filepath.Join(t.TempDir(), "golden")
	w, err := CreateMegatron(prefix, Uint16)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range testDocs {
		if err := w.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".idx", ".bin"} {
		checkGolden(t, prefix+ext, filepath.Join("testdata", "megatron_uint16"+ext))
	}
}

func TestNpyRoundTrip(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		dtype  DType
		tokens []uint32
		golden string
	}{
		"uint16": {dtype: Uint16, tokens: []uint32{1, 2, 3, 65535}, golden: "tokens_uint16.npy"},
		"uint32": {dtype: Uint32, tokens: []uint32{100000, 0, 4294967295}, golden: "tokens_uint32.npy"},
		"uint8":  {dtype: Uint8, tokens: []uint32{0, 1, 1, 0}, golden: "mask_uint8.npy"},
		"empty":  {dtype: Uint16},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "train_00000.npy")
			w, err := CreateNpy(path, tc.dtype)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Add(tc.tokens); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			got, dtype, err := ReadNpy(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.tokens, got, cmpEmptyIsNil); diff != "" || dtype != tc.dtype {
				t.Errorf("read %v (-written +read):\n%s", dtype, diff)
			}
			if size := fileSize(t, path); size != w.Bytes() || size%64 != 0 && len(tc.tokens) == 0 {
				t.Errorf("file holds %d bytes, Bytes() = %d", size, w.Bytes())
			}
			if tc.golden != "" {
				checkGolden(t, path, filepath.Join("testdata", tc.golden))
			}
		})
	}
}

func TestTokenOutOfRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := CreateNpy(filepath.Join(dir, "x.npy"), Uint16)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add([]uint32{70000}); err == nil || !strings.Contains(err.Error(), "does not fit uint16") {
		t.Fatalf("Add(70000) to uint16 = %v, want a does-not-fit error", err)
	}
	w.Abort()
	if _, err := os.Stat(filepath.Join(dir, "x.npy")); !os.IsNotExist(err) {
		t.Errorf("aborted shard exists under its final name: %v", err)
	}
	checkNoTemp(t, dir)
}

// TestAbortLeavesOldShard checks that a failed rewrite never replaces a
// complete shard with a partial one.
func TestAbortLeavesOldShard(t *testing.T) {
	t.Parallel()
	prefix := filepath.Join(t.TempDir(), "s")
	write := func(doc []uint32, commit bool) {
		w, err := CreateMegatron(prefix, Uint16)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Add(doc); err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			return
		}
		w.Abort()
	}
	write([]uint32{1, 2}, true)
	write([]uint32{9, 9, 9}, false)
	ds, err := ReadMegatron(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint32{1, 2}, ds.Document(0)); diff != "" {
		t.Errorf("shard after aborted rewrite (-want +got):\n%s", diff)
	}
	checkNoTemp(t, filepath.Dir(prefix))
}

func TestReadMegatronRejectsDamage(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(filepath.Join("testdata", "megatron_uint16.idx"))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join("testdata", "megatron_uint16.bin"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		idx, bin []byte
		wantErr  string
	}{
		"bad magic":     {idx: append([]byte("XXIDIDX\x00\x00"), good[9:]...), bin: bin, wantErr: "bad magic"},
		"truncated idx": {idx: good[:len(good)-8], bin: bin, wantErr: "do not hold"},
		"short bin":     {idx: good, bin: bin[:len(bin)-2], wantErr: "the index says"},
		"bad dtype":     {idx: withByte(good, 17, 6), bin: bin, wantErr: "dtype code 6"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := filepath.Join(t.TempDir(), "d")
			os.WriteFile(prefix+".idx", tc.idx, 0o644)
			os.WriteFile(prefix+".bin", tc.bin, 0o644)
			if _, err := ReadMegatron(prefix); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func withByte(b []byte, at int, v byte) []byte {
	out := append([]byte(nil), b...)
	out[at] = v
	return out
}

func checkGolden(t *testing.T, got, golden string) {
	t.Helper()
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("%s differs from %s (-golden +got):\n%s", got, golden, diff)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func checkNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

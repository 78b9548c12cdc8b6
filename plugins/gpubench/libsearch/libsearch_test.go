package libsearch

import (
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func file() *fstest.MapFile { return &fstest.MapFile{Data: []byte("ELF")} }

func TestFind(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH != "amd64" {
		t.Skip("fixtures use x86_64 folder names")
	}
	tests := map[string]struct {
		files     []string
		env       map[string]string
		dirs      []string
		lib       Library
		wantPath  string
		wantFound bool
	}{
		"driver in the container toolkit's folder": {
			files:     []string{"usr/local/nvidia/lib64/libcuda.so.1"},
			lib:       CUDA,
			wantPath:  "/usr/local/nvidia/lib64/libcuda.so.1",
			wantFound: true,
		},
		"configured folder wins over the system one": {
			files:     []string{"opt/cuda/lib/libnccl.so.2", "usr/lib/x86_64-linux-gnu/libnccl.so.2"},
			dirs:      []string{"/opt/cuda/lib"},
			lib:       NCCL,
			wantPath:  "/opt/cuda/lib/libnccl.so.2",
			wantFound: true,
		},
		"GPUFLOW_CUDA_LIB_DIR before LD_LIBRARY_PATH": {
			files:     []string{"a/libcublasLt.so.12", "b/libcublasLt.so.13"},
			env:       map[string]string{DirEnv: "/a", "LD_LIBRARY_PATH": "/b"},
			lib:       CuBLASLt,
			wantPath:  "/a/libcublasLt.so.12",
			wantFound: true,
		},
		"newest soname first within a folder": {
			files:     []string{"usr/local/cuda/lib64/libcublasLt.so.12", "usr/local/cuda/lib64/libcublasLt.so.13"},
			lib:       CuBLASLt,
			wantPath:  "/usr/local/cuda/lib64/libcublasLt.so.13",
			wantFound: true,
		},
		"file named by its own variable": {
			files:     []string{"x/y/libnccl.so.2.28.3", "usr/lib/x86_64-linux-gnu/libnccl.so.2"},
			env:       map[string]string{"GPUFLOW_LIBNCCL": "/x/y/libnccl.so.2.28.3"},
			lib:       NCCL,
			wantPath:  "/x/y/libnccl.so.2.28.3",
			wantFound: true,
		},
		"variable naming a missing file falls back to the search": {
			files:     []string{"usr/lib/x86_64-linux-gnu/libnccl.so.2"},
			env:       map[string]string{"GPUFLOW_LIBNCCL": "/nope/libnccl.so.2"},
			lib:       NCCL,
			wantPath:  "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
			wantFound: true,
		},
		"python wheel in a venv under /opt": {
			files:     []string{"opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublasLt.so.13"},
			lib:       CuBLASLt,
			wantPath:  "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublasLt.so.13",
			wantFound: true,
		},
		"python wheel of the active virtualenv": {
			files:     []string{"home/u/env/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"},
			env:       map[string]string{"VIRTUAL_ENV": "/home/u/env"},
			lib:       NCCL,
			wantPath:  "/home/u/env/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2",
			wantFound: true,
		},
		"nothing found leaves the bare name to the loader": {
			lib:      NVML,
			wantPath: "libnvidia-ml.so.1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{}
			for _, f := range tc.files {
				fsys[f] = file()
			}
			s := Search{FS: fsys, Getenv: func(k string) string { return tc.env[k] }, Dirs: tc.dirs}
			got := s.Find(tc.lib)
			if got.Path != tc.wantPath || got.Found != tc.wantFound {
				t.Errorf("Find = %q found=%v, want %q found=%v (looked in %v)",
					got.Path, got.Found, tc.wantPath, tc.wantFound, got.Looked)
			}
		})
	}
}

func TestFoldersOrderAndDedupe(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH != "amd64" {
		t.Skip("fixtures use x86_64 folder names")
	}
	env := map[string]string{
		DirEnv:            "/site/cuda:/usr/local/cuda/lib64/",
		"LD_LIBRARY_PATH": "/ld::/usr/lib",
		"HOME":            "/home/me",
	}
	fsys := fstest.MapFS{
		"home/me/.local/lib/python3.10/site-packages/nvidia/nvjitlink/lib/x.so": file(),
	}
	s := Search{FS: fsys, Getenv: func(k string) string { return env[k] }, Dirs: []string{"/cfg"}}
	want := []string{
		"/cfg", "/site/cuda", "/usr/local/cuda/lib64", "/ld", "/usr/lib",
		"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib",
		"/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
		"/home/me/.local/lib/python3.10/site-packages/nvidia/nvjitlink/lib",
	}
	if diff := cmp.Diff(want, s.Folders()); diff != "" {
		t.Errorf("Folders (-want +got):\n%s", diff)
	}
}

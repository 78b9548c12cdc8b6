package libsearch

import (
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"
)

// Library is one shared library and the file names it may go by, best
// first.
type Library struct {
	// Name is what a person calls it ("CUDA driver").
	Name string
	// Files are candidate file names, newest ABI first.
	Files []string
	// EnvFile names the environment variable that may hold a full path to
	// the file, bypassing the search.
	EnvFile string
}

// The libraries the benchmark stage uses.
var (
	CUDA     = Library{Name: "CUDA driver", Files: []string{"libcuda.so.1"}, EnvFile: "GPUFLOW_LIBCUDA"}
	NVML     = Library{Name: "NVML", Files: []string{"libnvidia-ml.so.1"}, EnvFile: "GPUFLOW_LIBNVML"}
	CuBLASLt = Library{Name: "cuBLASLt", Files: []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"}, EnvFile: "GPUFLOW_LIBCUBLASLT"}
	NCCL     = Library{Name: "NCCL", Files: []string{"libnccl.so.2", "libnccl.so"}, EnvFile: "GPUFLOW_LIBNCCL"}
)

// DirEnv names the environment variable holding extra folders (separated
// by ':') searched before the standard ones, for every library.
const DirEnv = "GPUFLOW_CUDA_LIB_DIR"

// Search says where to look.
type Search struct {
	// FS is the file system rooted at "/" (os.DirFS("/") outside tests).
	FS fs.FS
	// Getenv reads the environment (os.Getenv outside tests).
	Getenv func(string) string
	// Dirs are folders from the stage's configuration, searched first.
	Dirs []string
}

// Result is where a library was found, or the evidence that it was not.
type Result struct {
	Library Library
	// Path is the file to dlopen: a full path when a file was found, else
	// the bare name, left to the dynamic loader's own cache.
	Path string
	// Found is true when Path is a file this search saw.
	Found bool
	// Looked lists the folders searched, in order.
	Looked []string
}

// Find looks for lib: first the file named by lib.EnvFile, then every
// candidate name in each folder of Folders, in order.
func (s Search) Find(lib Library) Result {
	res := Result{Library: lib, Path: lib.Files[0]}
	if p := s.Getenv(lib.EnvFile); p != "" {
		res.Looked = append(res.Looked, lib.EnvFile+"="+p)
		if s.isFile(p) {
			res.Path, res.Found = p, true
			return res
		}
	}
	for _, dir := range s.Folders() {
		res.Looked = append(res.Looked, dir)
		for _, name := range lib.Files {
			p := path.Join(dir, name)
			if s.isFile(p) {
				res.Path, res.Found = p, true
				return res
			}
		}
	}
	return res
}

// Folders lists the folders searched, in order, without duplicates: the
// configured ones, $GPUFLOW_CUDA_LIB_DIR, $LD_LIBRARY_PATH, the driver's
// and toolkit's usual homes, the system library folders, then the lib
// folders of nvidia-* Python wheels in the usual environments.
func (s Search) Folders() []string {
	var dirs []string
	dirs = append(dirs, s.Dirs...)
	dirs = append(dirs, splitList(s.Getenv(DirEnv))...)
	dirs = append(dirs, splitList(s.Getenv("LD_LIBRARY_PATH"))...)
	dirs = append(dirs, systemDirs(runtime.GOARCH)...)
	dirs = append(dirs, s.wheelDirs()...)
	return dedupe(dirs)
}

func systemDirs(goarch string) []string {
	triple, target := "x86_64-linux-gnu", "x86_64-linux"
	if goarch == "arm64" {
		triple, target = "aarch64-linux-gnu", "sbsa-linux"
	}
	return []string{
		"/usr/local/nvidia/lib64",
		"/usr/local/nvidia/lib",
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/" + target + "/lib",
		"/usr/lib/" + triple,
		"/usr/lib64",
		"/usr/lib",
	}
}

// wheelDirs finds nvidia/*/lib (nvidia/cu13/lib too) under the
// site-packages of the active virtual or conda environment, /opt/*/.venv,
// /usr/local, /usr and the user's ~/.local.
func (s Search) wheelDirs() []string {
	var prefixes []string
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := s.Getenv(env); p != "" {
			prefixes = append(prefixes, p)
		}
	}
	prefixes = append(prefixes, "/opt/*/.venv", "/opt/conda", "/usr/local", "/usr")
	if home := s.Getenv("HOME"); home != "" {
		prefixes = append(prefixes, home+"/.local")
	}
	var dirs []string
	for _, p := range prefixes {
		for _, pkgs := range []string{"site-packages", "dist-packages"} {
			dirs = append(dirs, s.glob(p+"/lib/python3*/"+pkgs+"/nvidia/*/lib")...)
		}
	}
	return dirs
}

func (s Search) glob(pattern string) []string {
	matches, err := fs.Glob(s.FS, strings.TrimPrefix(pattern, "/"))
	if err != nil {
		return nil
	}
	for i, m := range matches {
		matches[i] = "/" + m
	}
	return matches
}

func (s Search) isFile(p string) bool {
	if !path.IsAbs(p) {
		return false
	}
	info, err := fs.Stat(s.FS, strings.TrimPrefix(path.Clean(p), "/"))
	return err == nil && !info.IsDir()
}

func splitList(v string) []string {
	var out []string
	for _, d := range strings.Split(v, ":") {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

func dedupe(dirs []string) []string {
	seen := map[string]bool{}
	out := dirs[:0:0]
	for _, d := range dirs {
		d = path.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// System searches this machine's file system and environment, after dirs.
func System(dirs []string) Search {
	return Search{FS: os.DirFS("/"), Getenv: os.Getenv, Dirs: dirs}
}

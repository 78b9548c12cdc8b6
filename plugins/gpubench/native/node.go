//go:build cgo && linux

package native

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/gpuflow/gpuflow/plugins/gpubench/kernels"
	"github.com/gpuflow/gpuflow/plugins/gpubench/libsearch"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// Node drives every GPU CUDA shows this process.
type Node struct {
	gpus     []*gpu
	info     []node.GPU
	versions node.Versions
	nccl     *comms
	boot     *Bootstrap
	// wedged is set when a rank stayed stuck in NCCL after an abort: its
	// worker can take no more work, so Close leaves the GPUs alone.
	wedged bool
}

// gpu is one device and the resources its worker thread holds.
type gpu struct {
	index  int
	w      *worker
	dev    C.CUdevice
	ctx    C.CUcontext
	stream C.CUstream
	module C.CUmodule
	fn     map[string]C.CUfunction
	sms    int
	lt     C.cublasLtHandle_t
}

var _ node.Node = (*Node)(nil)

// Open loads the libraries and prepares every visible GPU. On a machine
// without a driver it fails at once, naming what was missing and where it
// was sought.
func Open(opts Options) (node.Node, error) {
	n, err := open(opts)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func open(opts Options) (*Node, error) {
	libs := []libsearch.Library{libsearch.CUDA, libsearch.NVML}
	if opts.NeedCuBLASLt {
		libs = append(libs, libsearch.CuBLASLt)
	}
	if opts.NeedNCCL {
		libs = append(libs, libsearch.NCCL)
	}
	paths, err := load(libsearch.System(opts.LibDirs), libs)
	if err != nil {
		return nil, err
	}
	if err := cuCheck("cuInit", C.gf_cuInit(0)); err != nil {
		return nil, err
	}
	if err := nvmlCheck("nvmlInit", C.gf_nvmlInit()); err != nil {
		return nil, err
	}
	var count C.int
	if err := cuCheck("cuDeviceGetCount", C.gf_cuDeviceGetCount(&count)); err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, fmt.Errorf("CUDA sees no GPU (CUDA_VISIBLE_DEVICES=%q)", os.Getenv("CUDA_VISIBLE_DEVICES"))
	}
	ptx, err := modulePTX()
	if err != nil {
		return nil, err
	}
	n := &Node{boot: opts.Bootstrap}
	for i := range int(count) {
		g := &gpu{index: i, fn: map[string]C.CUfunction{}}
		w, err := startWorker(func() error { return g.setup(ptx) })
		if err != nil {
			n.Close()
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		g.w = w
		n.gpus = append(n.gpus, g)
		info, err := g.describe()
		if err != nil {
			n.Close()
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		n.info = append(n.info, info)
	}
	n.versions, err = readVersions(paths)
	if err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func modulePTX() (string, error) {
	p := os.Getenv(PTXEnv)
	if p == "" {
		return kernels.PTX(), nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", PTXEnv, err)
	}
	return string(b) + "\x00", nil
}

// setup runs on the GPU's own thread: context, stream, kernels.
func (g *gpu) setup(ptx string) error {
	if err := cuCheck("cuDeviceGet", C.gf_cuDeviceGet(&g.dev, C.int(g.index))); err != nil {
		return err
	}
	if err := cuCheck("cuDevicePrimaryCtxRetain", C.gf_cuDevicePrimaryCtxRetain(&g.ctx, g.dev)); err != nil {
		return err
	}
	if err := cuCheck("cuCtxSetCurrent", C.gf_cuCtxSetCurrent(g.ctx)); err != nil {
		return err
	}
	// CU_STREAM_NON_BLOCKING: no implicit syncing with the legacy stream.
	if err := cuCheck("cuStreamCreate", C.gf_cuStreamCreate(&g.stream, 1)); err != nil {
		return err
	}
	var sms C.int
	// CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
	if err := cuCheck("cuDeviceGetAttribute", C.gf_cuDeviceGetAttribute(&sms, 16, g.dev)); err != nil {
		return err
	}
	g.sms = int(sms)
	return g.loadKernels(ptx)
}

func (g *gpu) loadKernels(ptx string) error {
	cptx := C.CString(ptx)
	defer C.free(unsafe.Pointer(cptx))
	var log [4096]C.char
	if err := cuCheck("cuModuleLoadDataEx", C.gf_load_module(&g.module, cptx, &log[0], C.size_t(len(log)))); err != nil {
		return fmt.Errorf("%w: %s", err, C.GoString(&log[0]))
	}
	for _, name := range []string{kernels.FillRandom, kernels.CountRandomWrong, kernels.Triad,
		kernels.CountTriadWrong, kernels.FillPattern, kernels.CheckPattern, kernels.GEMMSample} {
		cname := C.CString(name)
		var f C.CUfunction
		err := cuCheck("cuModuleGetFunction "+name, C.gf_cuModuleGetFunction(&f, g.module, cname))
		C.free(unsafe.Pointer(cname))
		if err != nil {
			return err
		}
		g.fn[name] = f
	}
	return nil
}

func (g *gpu) describe() (node.GPU, error) {
	var name, bus [128]C.char
	var mem C.size_t
	var major, minor C.int
	err := errors.Join(
		cuCheck("cuDeviceGetName", C.gf_cuDeviceGetName(&name[0], C.int(len(name)), g.dev)),
		cuCheck("cuDeviceGetPCIBusId", C.gf_cuDeviceGetPCIBusId(&bus[0], C.int(len(bus)), g.dev)),
		cuCheck("cuDeviceTotalMem", C.gf_cuDeviceTotalMem(&mem, g.dev)),
		// CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR = 75/76
		cuCheck("cuDeviceGetAttribute", C.gf_cuDeviceGetAttribute(&major, 75, g.dev)),
		cuCheck("cuDeviceGetAttribute", C.gf_cuDeviceGetAttribute(&minor, 76, g.dev)),
	)
	return node.GPU{
		Index:             g.index,
		Name:              C.GoString(&name[0]),
		BusID:             C.GoString(&bus[0]),
		MemoryBytes:       int64(mem),
		ComputeCapability: fmt.Sprintf("%d.%d", major, minor),
		Multiprocessors:   g.sms,
	}, err
}

func readVersions(paths map[string]string) (node.Versions, error) {
	v := node.Versions{Libraries: paths}
	var drv [96]C.char
	if err := nvmlCheck("nvmlSystemGetDriverVersion", C.gf_nvmlSystemGetDriverVersion(&drv[0], C.uint(len(drv)))); err != nil {
		return v, err
	}
	v.Driver = C.GoString(&drv[0])
	var cuda C.int
	if err := cuCheck("cuDriverGetVersion", C.gf_cuDriverGetVersion(&cuda)); err != nil {
		return v, err
	}
	v.CUDA = fmt.Sprintf("%d.%d", cuda/1000, cuda%1000/10)
	if _, ok := paths[libsearch.NCCL.Name]; ok {
		var nv C.int
		if err := ncclCheck("ncclGetVersion", C.gf_ncclGetVersion(&nv), nil); err != nil {
			return v, err
		}
		v.NCCL = fmt.Sprintf("%d.%d.%d", nv/10000, nv/100%100, nv%100)
	}
	if _, ok := paths[libsearch.CuBLASLt.Name]; ok {
		lv := int(C.gf_cublasLtGetVersion())
		v.CuBLASLt = fmt.Sprintf("%d.%d.%d", lv/10000, lv/100%100, lv%100)
	}
	return v, nil
}

// GPUs implements node.Node.
func (n *Node) GPUs() []node.GPU { return n.info }

// Versions implements node.Node.
func (n *Node) Versions() node.Versions { return n.versions }

// Close frees the communicators, streams and contexts and stops the
// worker threads.
func (n *Node) Close() error {
	if n.wedged {
		return errors.New("a GPU thread is still stuck in NCCL after ncclCommAbort; its resources go with the process")
	}
	var errs []error
	if n.nccl != nil {
		errs = append(errs, n.nccl.destroyOn(n))
		n.nccl = nil
	}
	for _, g := range n.gpus {
		errs = append(errs, g.w.do(g.release))
		g.w.stop()
	}
	n.gpus = nil
	return errors.Join(errs...)
}

func (g *gpu) release() error {
	var errs []error
	if g.lt != nil {
		errs = append(errs, ltCheck("cublasLtDestroy", C.gf_cublasLtDestroy(g.lt)))
	}
	errs = append(errs,
		cuCheck("cuModuleUnload", C.gf_cuModuleUnload(g.module)),
		cuCheck("cuStreamDestroy", C.gf_cuStreamDestroy(g.stream)),
		cuCheck("cuDevicePrimaryCtxRelease", C.gf_cuDevicePrimaryCtxRelease(g.dev)),
	)
	return errors.Join(errs...)
}

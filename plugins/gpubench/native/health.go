//go:build cgo && linux

package native

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"context"
	"errors"
	"unsafe"

	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// nvlinkMax is NVML_NVLINK_MAX_LINKS.
const nvlinkMax = 18

// Health implements node.Node. NVML is thread-safe, so it runs here.
func (n *Node) Health(ctx context.Context) ([]node.Health, error) {
	var out []node.Health
	for _, info := range n.info {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := health(info)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// health finds the NVML device by PCI bus id (NVML counts GPUs in bus
// order, CUDA fastest first) and reads it.
func health(info node.GPU) (node.Health, error) {
	h := node.Health{GPU: info.Index, BusID: info.BusID}
	bus := C.CString(info.BusID)
	defer C.free(unsafe.Pointer(bus))
	var dev C.nvmlDevice_t
	if err := nvmlCheck("nvmlDeviceGetHandleByPciBusId", C.gf_nvmlDeviceGetHandleByPciBusId(bus, &dev)); err != nil {
		return h, err
	}
	r := reader{h: &h}
	r.identity(dev)
	r.ecc(dev)
	r.remaps(dev)
	r.links(dev)
	r.thermals(dev)
	return h, errors.Join(r.errs...)
}

// reader collects fields, marking those NVML cannot read here as
// unsupported and keeping real failures.
type reader struct {
	h    *node.Health
	errs []error
}

func (r *reader) ok(field, call string, ret C.nvmlReturn_t) bool {
	switch ret {
	case 0:
		return true
	case nvmlNotSupported, nvmlMissing:
		r.h.Unsupported = append(r.h.Unsupported, field)
	default:
		r.errs = append(r.errs, nvmlCheck(call, ret))
	}
	return false
}

func (r *reader) identity(dev C.nvmlDevice_t) {
	var name, uuid [96]C.char
	if r.ok("name", "nvmlDeviceGetName", C.gf_nvmlDeviceGetName(dev, &name[0], C.uint(len(name)))) {
		r.h.Name = C.GoString(&name[0])
	}
	if r.ok("uuid", "nvmlDeviceGetUUID", C.gf_nvmlDeviceGetUUID(dev, &uuid[0], C.uint(len(uuid)))) {
		r.h.UUID = C.GoString(&uuid[0])
	}
	var mem C.nvmlMemory_t
	if r.ok("memory_bytes", "nvmlDeviceGetMemoryInfo", C.gf_nvmlDeviceGetMemoryInfo(dev, &mem)) {
		r.h.MemoryBytes = int64(mem.total)
	}
}

// NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC.
const (
	eccUncorrected = 1
	eccVolatile    = 0
	eccAggregate   = 1
)

func (r *reader) ecc(dev C.nvmlDevice_t) {
	var cur, pend C.int
	if r.ok("ecc_enabled", "nvmlDeviceGetEccMode", C.gf_nvmlDeviceGetEccMode(dev, &cur, &pend)) {
		r.h.ECCEnabled = cur == 1
		r.h.ECCPendingChange = cur != pend
	}
	if !r.h.ECCEnabled {
		return
	}
	var vol, agg C.ulonglong
	if r.ok("uncorrectable_ecc_volatile", "nvmlDeviceGetTotalEccErrors",
		C.gf_nvmlDeviceGetTotalEccErrors(dev, eccUncorrected, eccVolatile, &vol)) {
		r.h.UncorrectableECCVolatile = uint64(vol)
	}
	if r.ok("uncorrectable_ecc_aggregate", "nvmlDeviceGetTotalEccErrors",
		C.gf_nvmlDeviceGetTotalEccErrors(dev, eccUncorrected, eccAggregate, &agg)) {
		r.h.UncorrectableECCAggregate = uint64(agg)
	}
}

// remaps reads row remapping (Ampere on) or, failing that, retired pages.
func (r *reader) remaps(dev C.nvmlDevice_t) {
	var corr, unc, pend, failed C.uint
	ret := C.gf_nvmlDeviceGetRemappedRows(dev, &corr, &unc, &pend, &failed)
	if ret == 0 {
		r.h.RemappedRowsCorrectable = uint64(corr)
		r.h.RemappedRowsUncorrectable = uint64(unc)
		r.h.RemapPending = pend != 0
		r.h.RemapFailed = failed != 0
		return
	}
	if ret != nvmlNotSupported && ret != nvmlMissing {
		r.errs = append(r.errs, nvmlCheck("nvmlDeviceGetRemappedRows", ret))
		return
	}
	r.h.Unsupported = append(r.h.Unsupported, "remapped_rows")
	var total uint64
	// NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0, _DOUBLE_BIT_ECC_ERROR = 1
	for cause := range 2 {
		var count C.uint
		ret := C.gf_nvmlDeviceGetRetiredPages(dev, C.int(cause), &count, nil)
		// With no room for addresses NVML answers INSUFFICIENT_SIZE (7) and
		// the count.
		if ret != 0 && ret != 7 {
			r.ok("retired_pages", "nvmlDeviceGetRetiredPages", ret)
			return
		}
		total += uint64(count)
	}
	r.h.RetiredPages = total
}

func (r *reader) links(dev C.nvmlDevice_t) {
	for link := range nvlinkMax {
		var active C.int
		ret := C.gf_nvmlDeviceGetNvLinkState(dev, C.uint(link), &active)
		if ret != 0 {
			// Links past the GPU's last answer NOT_SUPPORTED or
			// INVALID_ARGUMENT: they do not exist.
			continue
		}
		r.h.NVLinksSupported++
		if active == 1 {
			r.h.NVLinksActive++
		}
	}
}

// NVML_TEMPERATURE_GPU
const tempGPU = 0

func (r *reader) thermals(dev C.nvmlDevice_t) {
	var gen, genMax, width, widthMax, temp, mw, limit C.uint
	if r.ok("pcie_gen", "nvmlDeviceGetCurrPcieLinkGeneration", C.gf_nvmlDeviceGetCurrPcieLinkGeneration(dev, &gen)) {
		r.h.PCIeGen = int(gen)
	}
	if r.ok("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration", C.gf_nvmlDeviceGetMaxPcieLinkGeneration(dev, &genMax)) {
		r.h.PCIeGenMax = int(genMax)
	}
	if r.ok("pcie_width", "nvmlDeviceGetCurrPcieLinkWidth", C.gf_nvmlDeviceGetCurrPcieLinkWidth(dev, &width)) {
		r.h.PCIeWidth = int(width)
	}
	if r.ok("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth", C.gf_nvmlDeviceGetMaxPcieLinkWidth(dev, &widthMax)) {
		r.h.PCIeWidthMax = int(widthMax)
	}
	if r.ok("temperature_c", "nvmlDeviceGetTemperature", C.gf_nvmlDeviceGetTemperature(dev, tempGPU, &temp)) {
		r.h.TemperatureC = float64(temp)
	}
	if r.ok("power_w", "nvmlDeviceGetPowerUsage", C.gf_nvmlDeviceGetPowerUsage(dev, &mw)) {
		r.h.PowerW = float64(mw) / 1e3
	}
	if r.ok("power_limit_w", "nvmlDeviceGetEnforcedPowerLimit", C.gf_nvmlDeviceGetEnforcedPowerLimit(dev, &limit)) {
		r.h.PowerLimitW = float64(limit) / 1e3
	}
	var reasons C.ulonglong
	if r.ok("clock_event_reasons", "nvmlDeviceGetCurrentClocksEventReasons", C.gf_nvmlDeviceGetClockEventReasons(dev, &reasons)) {
		r.h.ClockEvents = uint64(reasons)
	}
}

package preflight

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Host is what the checks read.
type Host struct {
	// FS is rooted at "/" (os.DirFS("/") outside tests).
	FS fs.FS
	// Environ lists the environment as KEY=value lines.
	Environ []string
	// AllowedCPUs is the set of CPUs this process may run on.
	AllowedCPUs []int
}

// System is this machine.
func System() (Host, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return Host{}, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for cpu := range 4096 {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return Host{FS: os.DirFS("/"), Environ: os.Environ(), AllowedCPUs: cpus}, nil
}

// Finding is one thing a check found; Error findings fail the check.
type Finding struct {
	Check   string `json:"check"`
	Error   bool   `json:"error"`
	Message string `json:"message"`
}

// PortRange reads net.ipv4.ip_local_port_range and returns its width.
func (h Host) PortRange() (low, high int, err error) {
	b, err := fs.ReadFile(h.FS, "proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("ip_local_port_range holds %q, want two numbers", strings.TrimSpace(string(b)))
	}
	low, err1 := strconv.Atoi(f[0])
	high, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("ip_local_port_range holds %q, want two numbers", strings.TrimSpace(string(b)))
	}
	return low, high, nil
}

// CheckPortRange fails when fewer than min ephemeral ports exist.
func (h Host) CheckPortRange(min int) []Finding {
	low, high, err := h.PortRange()
	if err != nil {
		return []Finding{{Check: "port_range", Message: "cannot read the ephemeral port range: " + err.Error()}}
	}
	if width := high - low + 1; width < min {
		return []Finding{{Check: "port_range", Error: true, Message: fmt.Sprintf(
			"ephemeral port range %d-%d holds %d ports, fewer than %d: NCCL's bootstrap can run out; widen /proc/sys/net/ipv4/ip_local_port_range (10000 65535, say)",
			low, high, width, min)}}
	}
	return nil
}

// Affinity is where one GPU sits relative to the CPUs.
type Affinity struct {
	BusID     string `json:"bus_id"`
	NUMANode  int    `json:"numa_node"`
	LocalCPUs string `json:"local_cpus"`
	// Reachable is false when this process may run on none of the GPU's
	// local CPUs.
	Reachable bool `json:"reachable"`
}

// GPUAffinity reads the GPU's NUMA node and local CPUs from sysfs. busID is
// CUDA's form ("0000:18:00.0"); NVML's 8-digit domain is accepted too.
func (h Host) GPUAffinity(busID string) (Affinity, error) {
	dir := "sys/bus/pci/devices/" + sysfsBusID(busID)
	a := Affinity{BusID: busID, NUMANode: -1, Reachable: true}
	if b, err := fs.ReadFile(h.FS, dir+"/numa_node"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			a.NUMANode = n
		}
	}
	b, err := fs.ReadFile(h.FS, dir+"/local_cpulist")
	if err != nil {
		return a, err
	}
	a.LocalCPUs = strings.TrimSpace(string(b))
	local, err := ParseCPUList(a.LocalCPUs)
	if err != nil {
		return a, err
	}
	a.Reachable = slices.ContainsFunc(h.AllowedCPUs, func(c int) bool { return slices.Contains(local, c) })
	return a, nil
}

// CheckAffinity fails for GPUs none of whose local CPUs this process may
// use: NCCL's threads would then run across the socket from their GPU.
func (h Host) CheckAffinity(busIDs []string) ([]Affinity, []Finding) {
	var out []Affinity
	var findings []Finding
	for i, bus := range busIDs {
		a, err := h.GPUAffinity(bus)
		out = append(out, a)
		if err != nil {
			findings = append(findings, Finding{Check: "cpu_affinity", Message: fmt.Sprintf("GPU %d (%s): cannot read its local CPUs: %v", i, bus, err)})
			continue
		}
		if !a.Reachable {
			findings = append(findings, Finding{Check: "cpu_affinity", Error: true, Message: fmt.Sprintf(
				"GPU %d (%s, NUMA node %d) is local to CPUs %s, none of which this process may use; bind it to the GPU's NUMA node (numactl, the scheduler's CPU binding)",
				i, bus, a.NUMANode, a.LocalCPUs)})
		}
	}
	return out, findings
}

// sysfsBusID lowercases the id and trims NVML's 8-digit PCI domain to 4.
func sysfsBusID(id string) string {
	id = strings.ToLower(id)
	if dom, rest, ok := strings.Cut(id, ":"); ok && len(dom) == 8 {
		id = dom[4:] + ":" + rest
	}
	return id
}

// ParseCPUList parses the kernel's list format ("0-3,8,10-11").
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

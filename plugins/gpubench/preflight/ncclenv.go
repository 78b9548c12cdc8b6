package preflight

import (
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// knownNCCLVars are the NCCL_* variables NCCL reads (from its environment
// documentation); any other NCCL_ name is likely a typo that silently does
// nothing.
var knownNCCLVars = []string{
	"NCCL_ALGO", "NCCL_ASYNC_ERROR_HANDLING", "NCCL_BUFFSIZE", "NCCL_COLLNET_ENABLE",
	"NCCL_CROSS_NIC", "NCCL_CUMEM_ENABLE", "NCCL_DEBUG", "NCCL_DEBUG_FILE", "NCCL_DEBUG_SUBSYS",
	"NCCL_DMABUF_ENABLE", "NCCL_GRAPH_DUMP_FILE", "NCCL_GRAPH_FILE", "NCCL_IB_ADAPTIVE_ROUTING",
	"NCCL_IB_DISABLE", "NCCL_IB_GID_INDEX", "NCCL_IB_HCA", "NCCL_IB_PCI_RELAXED_ORDERING",
	"NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_RETRY_CNT", "NCCL_IB_SL", "NCCL_IB_SPLIT_DATA_ON_QPS",
	"NCCL_IB_TC", "NCCL_IB_TIMEOUT", "NCCL_IGNORE_CPU_AFFINITY", "NCCL_LAUNCH_MODE",
	"NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MNNVL_ENABLE", "NCCL_NET",
	"NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_NET_PLUGIN", "NCCL_NSOCKS_PERTHREAD",
	"NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_P2P_NET_CHUNKSIZE",
	"NCCL_PROFILER_PLUGIN", "NCCL_PROTO", "NCCL_RAS_ENABLE", "NCCL_RUNTIME_CONNECT",
	"NCCL_SHARP_DISABLE", "NCCL_SHARP_ENABLE", "NCCL_SHM_DISABLE", "NCCL_SOCKET_FAMILY",
	"NCCL_SOCKET_IFNAME", "NCCL_SOCKET_NTHREADS", "NCCL_TOPO_DUMP_FILE", "NCCL_TOPO_FILE",
	"NCCL_TUNER_PLUGIN", "NCCL_WORK_FIFO_DEPTH",
	// Not read by NCCL, but set by NVIDIA's CUDA container images.
	"NCCL_VERSION",
}

// CheckNCCLEnv reviews the NCCL_* environment. network is the hardware's
// scale-out kind ("ib", "roce", "ethernet", "none").
func (h Host) CheckNCCLEnv(network string) []Finding {
	env := map[string]string{}
	for _, kv := range h.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "NCCL_") {
			env[k] = v
		}
	}
	var out []Finding
	add := func(isErr bool, format string, args ...any) {
		out = append(out, Finding{Check: "nccl_env", Error: isErr, Message: fmt.Sprintf(format, args...)})
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !slices.Contains(knownNCCLVars, k) {
			add(false, "%s is not a variable NCCL reads; a typo?", k)
		}
	}
	if env["NCCL_P2P_DISABLE"] == "1" {
		add(true, "NCCL_P2P_DISABLE=1 sends GPU-to-GPU traffic through host memory instead of NVLink or PCIe peer access")
	}
	if env["NCCL_SHM_DISABLE"] == "1" {
		add(true, "NCCL_SHM_DISABLE=1 turns off shared-memory transport between processes of one node")
	}
	if env["NCCL_IB_DISABLE"] == "1" && (network == "ib" || network == "roce") {
		add(true, "NCCL_IB_DISABLE=1 on a node whose network is %s: NCCL falls back to TCP sockets", network)
	}
	if d := strings.ToUpper(env["NCCL_DEBUG"]); d == "INFO" || d == "TRACE" {
		add(false, "NCCL_DEBUG=%s logs every connection and slows start-up; WARN is the production setting", env["NCCL_DEBUG"])
	}
	for _, k := range []string{"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE"} {
		if v, ok := env[k]; ok {
			add(false, "%s=%s overrides NCCL's own tuning; measured figures hold only with it set", k, v)
		}
	}
	threads, tErr := strconv.Atoi(env["NCCL_SOCKET_NTHREADS"])
	socks, sErr := strconv.Atoi(env["NCCL_NSOCKS_PERTHREAD"])
	if tErr == nil && sErr == nil && threads*socks > 64 {
		add(true, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = %d, over NCCL's limit of 64", threads*socks)
	}
	if names, ok := env["NCCL_SOCKET_IFNAME"]; ok {
		out = append(out, h.checkIfnames(names)...)
	}
	if f, ok := env["NCCL_TOPO_FILE"]; ok {
		if _, err := fs.Stat(h.FS, strings.TrimPrefix(f, "/")); err != nil {
			add(true, "NCCL_TOPO_FILE=%s cannot be read: %v", f, err)
		}
	}
	return out
}

// checkIfnames fails when no interface matches NCCL_SOCKET_IFNAME, which
// is a comma list of prefixes, each possibly negated (^) or exact (=).
func (h Host) checkIfnames(spec string) []Finding {
	entries, err := fs.ReadDir(h.FS, "sys/class/net")
	if err != nil {
		return nil
	}
	exclude := strings.HasPrefix(spec, "^")
	for _, e := range entries {
		if ifnameMatches(e.Name(), strings.TrimPrefix(spec, "^")) != exclude {
			return nil
		}
	}
	return []Finding{{Check: "nccl_env", Error: true, Message: fmt.Sprintf(
		"NCCL_SOCKET_IFNAME=%s matches no network interface of this node", spec)}}
}

func ifnameMatches(name, spec string) bool {
	for _, want := range strings.Split(spec, ",") {
		exact := strings.HasPrefix(want, "=")
		want = strings.TrimPrefix(want, "=")
		if name == want || (!exact && strings.HasPrefix(name, want)) {
			return true
		}
	}
	return false
}

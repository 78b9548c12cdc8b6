package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuflow/gpuflow/hardware"
)

func runHardware(env *cliEnv, args []string) int {
	fs := newFlagSet("hardware", env, "list | show NAME")
	if !parseFlags(fs, args) {
		return 1
	}
	switch {
	case fs.NArg() == 1 && fs.Arg(0) == "list":
		return hardwareList(env)
	case fs.NArg() == 2 && fs.Arg(0) == "show":
		return hardwareShow(env, fs.Arg(1))
	}
	fmt.Fprintln(env.stderr, "Usage: gpuflow hardware list | gpuflow hardware show NAME")
	return 1
}

func hardwareList(env *cliEnv) int {
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tNODES\tGPUS\tGPU\tMEMORY\tBF16 TFLOP/S\tSCALE-UP\tSCALE-OUT\t$/GPU-H")
	for _, name := range hardware.BuiltinNames() {
		p, err := hardware.Builtin(name)
		if err != nil {
			fmt.Fprintf(env.stderr, "Error: %s\n", err)
			return 1
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.0f GiB\t%.0f\t%s %.0f GB/s\t%s\t%.2f\n", name, p.Nodes, p.TotalGPUs(),
			p.GPU.Model, gib(p.GPU.MemoryBytes), p.GPU.TFLOPS[hardware.PrecisionBF16],
			p.Interconnect.Kind, p.Interconnect.BytesPerS/1e9, networkLine(p.Network), p.CostPerGPUHour)
	}
	tw.Flush()
	return 0
}

func networkLine(n hardware.Network) string {
	if n.Kind == hardware.NetworkNone || n.NICsPerNode == 0 {
		return "none"
	}
	return fmt.Sprintf("%s %dx%.0fG", n.Kind, n.NICsPerNode, n.GbpsPerNIC)
}

func hardwareShow(env *cliEnv, name string) int {
	p, err := hardware.Builtin(name)
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s. Run gpuflow hardware list for the names.\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, a...)...) }
	row("name", "%s", p.Name)
	row("description", "%s", p.Description)
	row("source", "%s", p.Source)
	row("nodes", "%d", p.Nodes)
	row("gpu", "%d x %s per node, %.0f GiB, compute capability %s", p.GPU.PerNode, p.GPU.Model, gib(p.GPU.MemoryBytes), p.GPU.ComputeCapability)
	if p.GPU.Datasheet != "" {
		row("  datasheet", "%s", p.GPU.Datasheet)
	}
	for _, prec := range []string{hardware.PrecisionBF16, hardware.PrecisionFP16, hardware.PrecisionFP8, hardware.PrecisionTF32} {
		if v := p.GPU.TFLOPS[prec]; v > 0 {
			row("  dense "+prec, "%.0f TFLOP/s", v)
		}
	}
	row("  hbm", "%.2f TB/s", p.GPU.HBMBytesPerS/1e12)
	row("  tdp", "%.0f W", p.GPU.TDPWatts)
	row("interconnect", "%s, %.0f GB/s per GPU each way, %.1f us, NVLink domain of %d GPUs",
		p.Interconnect.Kind, p.Interconnect.BytesPerS/1e9, p.Interconnect.LatencyS*1e6, p.Interconnect.DomainSize)
	row("  nvlink multicast", "%s", multicastLine(p.Interconnect))
	row("network", "%s (GPUDirect RDMA %v)", networkLine(p.Network), p.Network.GPUDirectRDMA)
	row("cost", "$%.2f per GPU-hour", p.CostPerGPUHour)
	tw.Flush()
	return 0
}

func multicastLine(i hardware.Interconnect) string {
	if i.MulticastOff {
		return "off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1)"
	}
	return "allowed"
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }

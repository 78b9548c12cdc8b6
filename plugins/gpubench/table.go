package gpubench

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Tables renders every measured figure as plain-text tables (bandwidth in
// decimal units: TB/s = 1e12 bytes/s, GB/s = 1e9; sizes in binary units).
func (res *Results) Tables() string {
	var b strings.Builder
	for _, t := range []string{healthTable(res), gemmTable(res), hbmTable(res), p2pTable(res), ncclTable(res), stragglerTable(res)} {
		if t != "" {
			b.WriteString(t)
			b.WriteString("\n")
		}
	}
	b.WriteString(verdictTable(res))
	return b.String()
}

// table lays out rows under a title, columns separated by two spaces.
func table(title string, header string, rows []string) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(title + "\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, header+"\t")
	for _, r := range rows {
		fmt.Fprintln(w, r+"\t")
	}
	w.Flush()
	return b.String()
}

func healthTable(res *Results) string {
	var rows []string
	for i, h := range res.Health {
		numa := "-"
		if i < len(res.Affinity) && res.Affinity[i].NUMANode >= 0 {
			numa = fmt.Sprint(res.Affinity[i].NUMANode)
		}
		rows = append(rows, fmt.Sprintf("%d\t%s\t%s\t%.0f GiB\t%s\t%d/%d\t%d/%d\t%d/%d\t%d\t%.0f\t%.0f/%.0f\t%s\t%s",
			h.GPU, h.Name, h.BusID, float64(h.MemoryBytes)/(1<<30), map[bool]string{true: "on", false: "off"}[h.ECCEnabled],
			h.UncorrectableECCVolatile, h.RemappedRowsUncorrectable, h.NVLinksActive, h.NVLinksSupported,
			h.PCIeGen, h.PCIeWidth, h.PCIeWidthMax, h.TemperatureC, h.PowerW, h.PowerLimitW,
			clockEvents(h.ClockEvents), numa))
	}
	t := table(fmt.Sprintf("health (driver %s, CUDA %s, NCCL %s)", res.Versions.Driver, res.Versions.CUDA, orDash(res.Versions.NCCL)),
		"gpu\tname\tbus\tmemory\tecc\tunc.ecc/remap\tnvlink up\tpcie gen/width\tmax\t°C\tW/limit\tclock events\tnuma", rows)
	for _, f := range res.Preflight {
		level := "note"
		if f.Error {
			level = "FAIL"
		}
		t += fmt.Sprintf("preflight %s %s: %s\n", f.Check, level, f.Message)
	}
	return t
}

func clockEvents(bits uint64) string {
	if bits == 0 {
		return "none"
	}
	return fmt.Sprintf("%#x", bits)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func gemmTable(res *Results) string {
	var rows []string
	for _, r := range res.GEMM {
		rows = append(rows, fmt.Sprintf("%s\t%d\t%d\t%.1f\t%.3f\t%.1e\t%d/%d", r.DType, r.M, r.GPU, r.TFLOPS, r.TimeS*1e3, r.RelErr, r.Best+1, r.Candidates))
	}
	t := table("gemm (cuBLASLt, best of its heuristic candidates; TFLOP/s per GPU)", "dtype\tsize³\tgpu\tTFLOP/s\tms\trel.err\tbest/of", rows)
	var sp []string
	for _, s := range res.GEMMSpread {
		sp = append(sp, fmt.Sprintf("%s\t%d\t%.1f\t%d\t%.1f\t%.1f%%", s.DType, s.Size, s.MedianTFLOPS, s.SlowestGPU, s.SlowestTFLOPS, 100*s.SlowestVsMedian))
	}
	return t + table("gemm spread", "dtype\tsize³\tmedian\tslowest gpu\tTFLOP/s\tbehind", sp)
}

func hbmTable(res *Results) string {
	var rows []string
	for _, r := range res.HBM {
		rows = append(rows, fmt.Sprintf("%d\t%s\t%.3f\t%s\t%.3f\t%d", r.GPU, FormatBytes(r.CopyBytes), r.CopyTBps, FormatBytes(r.TriadBytes), r.TriadTBps, r.Wrong))
	}
	return table("hbm (TB/s, bytes read plus written)", "gpu\tcopy\tTB/s\ttriad arrays\tTB/s\twrong", rows)
}

func p2pTable(res *Results) string {
	var rows []string
	for _, r := range res.P2P {
		bidir := "-"
		if r.BidirGBps > 0 {
			bidir = fmt.Sprintf("%.1f", r.BidirGBps)
		}
		rows = append(rows, fmt.Sprintf("%d\t%d\t%s\t%v\t%.1f\t%s\t%d", r.Src, r.Dst, FormatBytes(r.Bytes), r.PeerAccess, r.OneWayGBps, bidir, r.Wrong))
	}
	return table("p2p (copy engines; GB/s)", "src\tdst\tbytes\tpeer\tone-way\tboth ways\twrong", rows)
}

func ncclTable(res *Results) string {
	var rows []string
	for _, r := range res.NCCL {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%d\t%.1f\t%.2f\t%.2f\t%d", r.Op, r.DType, FormatBytes(r.Bytes), r.Count,
			map[bool]string{true: "in", false: "out"}[r.InPlace], r.Iters, r.TimeS*1e6, r.AlgBWGBps, r.BusBWGBps, r.Wrong))
	}
	return table("nccl (nccl-tests definitions; GB/s)", "op\tdtype\tsize\tcount\tplace\titers\ttime us\talgbw\tbusbw\t#wrong", rows)
}

func stragglerTable(res *Results) string {
	var rows []string
	for _, s := range res.Stragglers {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.2f", s.Op, FormatBytes(s.Bytes),
			map[bool]string{true: "in", false: "out"}[s.InPlace], s.Node, s.GPU, s.Rank, s.TimeS*1e6, s.MedianS*1e6, s.Ratio))
	}
	return table("nccl stragglers (each rank's time of one collective against the median of all ranks)",
		"op\tsize\tplace\tnode\tgpu\trank\ttime us\tmedian us\tratio", rows)
}

func verdictTable(res *Results) string {
	var b strings.Builder
	for _, v := range res.Checks {
		switch {
		case v.Skipped != "":
			fmt.Fprintf(&b, "%-7s skipped: %s\n", v.Check, v.Skipped)
		case v.Passed:
			fmt.Fprintf(&b, "%-7s PASS\n", v.Check)
		default:
			fmt.Fprintf(&b, "%-7s FAIL\n", v.Check)
			for _, f := range v.Failures {
				fmt.Fprintf(&b, "        - %s\n", f)
			}
		}
	}
	return b.String()
}

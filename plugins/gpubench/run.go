package gpubench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
)

// Runner runs the configured checks on one node, reporting as it goes.
type Runner struct {
	Node node.Node
	Host preflight.Host
	Sink api.EventSink
	// Now is the clock (time.Now outside tests).
	Now func() time.Time
	// Job is set when this node is one of several of a job: the NCCL check
	// then exchanges per-rank times and node 0 judges stragglers.
	Job *cluster.Job
}

// check is one configured check.
type check struct {
	name string
	run  func(context.Context, *Results) Verdict
}

// Run runs every configured check in order: health, gemm, hbm, p2p, nccl.
// A check that errors fails and the next still runs; a cancelled context
// ends the run.
func (r *Runner) Run(ctx context.Context, cfg Config) *Results {
	start := r.Now()
	res := &Results{FormatVersion: ResultsFormatVersion, Passed: true, GPUs: r.Node.GPUs(), Versions: r.Node.Versions()}
	if r.Job != nil {
		res.Job = &JobPlace{NodeRank: r.Job.NodeRank, Nodes: r.Job.Nodes}
	}
	checks := r.checks(cfg)
	for i, c := range checks {
		r.progress("checks", float64(i), float64(len(checks)), "checks")
		var v Verdict
		if ctx.Err() != nil {
			v = Verdict{Check: c.name, Failures: []string{"not run: the stage was stopped (" + context.Cause(ctx).Error() + ")"}}
		} else {
			v = c.run(ctx, res)
		}
		v.Passed = len(v.Failures) == 0
		res.Passed = res.Passed && v.Passed
		res.Checks = append(res.Checks, v)
		r.logVerdict(v)
	}
	r.progress("checks", float64(len(checks)), float64(len(checks)), "checks")
	res.DurationS = r.Now().Sub(start).Seconds()
	return res
}

func (r *Runner) checks(cfg Config) []check {
	var out []check
	if cfg.Health != nil {
		out = append(out, check{"health", func(ctx context.Context, res *Results) Verdict { return r.health(ctx, cfg, res) }})
	}
	if cfg.GEMM != nil {
		out = append(out, check{"gemm", func(ctx context.Context, res *Results) Verdict { return r.gemm(ctx, cfg.GEMM, res) }})
	}
	if cfg.HBM != nil {
		out = append(out, check{"hbm", func(ctx context.Context, res *Results) Verdict { return r.hbm(ctx, cfg.HBM, res) }})
	}
	if cfg.P2P != nil {
		out = append(out, check{"p2p", func(ctx context.Context, res *Results) Verdict { return r.p2p(ctx, cfg.P2P, res) }})
	}
	if cfg.NCCL != nil {
		out = append(out, check{"nccl", func(ctx context.Context, res *Results) Verdict { return r.nccl(ctx, cfg.NCCL, res) }})
	}
	return out
}

func (r *Runner) health(ctx context.Context, cfg Config, res *Results) Verdict {
	c := cfg.Health
	v := Verdict{Check: "health"}
	hs, err := r.Node.Health(ctx)
	if err != nil {
		v.Failures = append(v.Failures, "reading GPU state through NVML: "+err.Error())
	}
	res.Health = hs
	v.Failures = append(v.Failures, healthFailures(c, res.GPUs, hs, res.Versions)...)
	var findings []preflight.Finding
	var bus []string
	for _, g := range res.GPUs {
		bus = append(bus, g.BusID)
	}
	res.Affinity, findings = r.Host.CheckAffinity(bus)
	if c.MinPortRange > 0 {
		findings = append(findings, r.Host.CheckPortRange(c.MinPortRange)...)
	}
	if c.NCCLEnv {
		findings = append(findings, r.Host.CheckNCCLEnv(cfg.Hardware.NetworkKind)...)
	}
	res.Preflight = findings
	for _, f := range findings {
		if f.Error {
			v.Failures = append(v.Failures, f.Message)
		} else {
			r.log("warn", "preflight: "+f.Message)
		}
	}
	r.logTable(healthTable(res))
	return v
}

func (r *Runner) gemm(ctx context.Context, c *GEMMConfig, res *Results) Verdict {
	v := Verdict{Check: "gemm"}
	total, done := float64(len(c.DTypes)*len(c.Sizes)), 0.0
	for _, dt := range c.DTypes {
		for _, size := range c.Sizes {
			r.progress("gemm "+dt+" "+fmt.Sprint(size), done, total, "products")
			done++
			spec := node.GEMMSpec{DType: dt, M: size, N: size, K: size, TopK: c.TopK, Warmup: c.Warmup,
				WarmupSeconds: c.WarmupSeconds, RestSeconds: c.RestSeconds, Repeats: c.Repeats, Iters: c.Iters, WorkspaceBytes: c.WorkspaceBytes, Seed: uint64(size)}
			out, err := r.Node.GEMM(ctx, spec)
			if err != nil {
				v.Failures = append(v.Failures, fmt.Sprintf("%s %d³: %v", dt, size, err))
				if ctx.Err() != nil {
					return v
				}
				continue
			}
			for _, o := range out {
				row := GEMMRow{DType: dt, M: size, N: size, K: size, GPU: o.GPU, TimeS: o.Seconds,
					TFLOPS: spec.FLOP() / o.Seconds / 1e12, RelErr: o.RelErr, Candidates: o.Candidates, Best: o.Best}
				res.GEMM = append(res.GEMM, row)
				r.metric(fmt.Sprintf("gemm.%s.%d.gpu%d.tflops", dt, size, o.GPU), row.TFLOPS, "TFLOP/s")
			}
		}
	}
	res.GEMMSpread = spreads(res.GEMM)
	v.Failures = append(v.Failures, gemmFailures(c, res.GEMM, res.GEMMSpread)...)
	r.logTable(gemmTable(res))
	return v
}

func (r *Runner) hbm(ctx context.Context, c *HBMConfig, res *Results) Verdict {
	v := Verdict{Check: "hbm"}
	spec := node.HBMSpec{Bytes: c.Bytes, Warmup: c.Warmup, Iters: c.Iters}
	out, err := r.Node.HBM(ctx, spec)
	if err != nil {
		v.Failures = append(v.Failures, err.Error())
		return v
	}
	for _, o := range out {
		row := HBMRow{GPU: o.GPU, CopyBytes: c.Bytes, TriadBytes: spec.TriadArrayBytes(), Wrong: o.Wrong,
			CopyTBps: 2 * float64(c.Bytes) / o.CopySeconds / 1e12, TriadTBps: 3 * float64(spec.TriadArrayBytes()) / o.TriadSeconds / 1e12}
		res.HBM = append(res.HBM, row)
		r.metric(fmt.Sprintf("hbm.copy.gpu%d.tbps", o.GPU), row.CopyTBps, "TB/s")
		r.metric(fmt.Sprintf("hbm.triad.gpu%d.tbps", o.GPU), row.TriadTBps, "TB/s")
	}
	v.Failures = append(v.Failures, hbmFailures(c, res.HBM)...)
	r.logTable(hbmTable(res))
	return v
}

func (r *Runner) p2p(ctx context.Context, c *P2PConfig, res *Results) Verdict {
	v := Verdict{Check: "p2p"}
	if len(res.GPUs) < 2 {
		v.Skipped = "one GPU: no pair to copy between"
		return v
	}
	out, err := r.Node.P2P(ctx, node.P2PSpec{Bytes: c.Bytes, Warmup: c.Warmup, Iters: c.Iters})
	if err != nil {
		v.Failures = append(v.Failures, err.Error())
		return v
	}
	for _, o := range out {
		row := P2PRow{Src: o.Src, Dst: o.Dst, Bytes: c.Bytes, PeerAccess: o.PeerAccess, Wrong: o.Wrong,
			OneWayGBps: float64(c.Bytes) / o.OneWaySeconds / 1e9}
		if o.BidirSeconds > 0 {
			row.BidirGBps = 2 * float64(c.Bytes) / o.BidirSeconds / 1e9
		}
		res.P2P = append(res.P2P, row)
		r.metric(fmt.Sprintf("p2p.gpu%d.gpu%d.gbps", o.Src, o.Dst), row.OneWayGBps, "GB/s")
	}
	v.Failures = append(v.Failures, p2pFailures(c, res.P2P)...)
	r.logTable(p2pTable(res))
	return v
}

func (r *Runner) nccl(ctx context.Context, c *NCCLConfig, res *Results) Verdict {
	v, times := r.ncclSweep(ctx, c, res)
	if r.Job != nil {
		v.Failures = append(v.Failures, r.judgeStragglers(ctx, c, res, times)...)
	}
	return v
}

// ncclSweep runs every collective at every size, and returns the verdict
// and each GPU's times.
func (r *Runner) ncclSweep(ctx context.Context, c *NCCLConfig, res *Results) (Verdict, []cluster.CollectiveTimes) {
	v := Verdict{Check: "nccl"}
	var times []cluster.CollectiveTimes
	sizes := c.Sizes()
	total, done := float64(len(c.Ops)*len(sizes)), 0.0
	for _, op := range c.Ops {
		for _, size := range sizes {
			r.progress(fmt.Sprintf("nccl %s %s", op, FormatBytes(size)), done, total, "sizes")
			done++
			for _, inPlace := range placements(c.InPlace && op.SupportsInPlace()) {
				out, err := r.Node.Collective(ctx, node.CollectiveSpec{Op: op, DType: c.DType, Bytes: size,
					InPlace: inPlace, Warmup: c.Warmup, Iters: c.Iters, MinSeconds: c.MinSeconds, Timeout: c.Timeout})
				var hung *node.HungError
				if errors.As(err, &hung) || ctx.Err() != nil {
					v.Failures = append(v.Failures, err.Error())
					r.logTable(ncclTable(res))
					return v, times
				}
				if err != nil {
					v.Failures = append(v.Failures, fmt.Sprintf("%s of %s (%s): %v", op, FormatBytes(size), placeName(inPlace), err))
					continue
				}
				ranks := max(out.Ranks, len(res.GPUs))
				alg, bus := op.Bandwidth(out.Layout.Bytes, out.Seconds, ranks)
				row := NCCLRow{Op: op, DType: c.DType, Bytes: out.Layout.Bytes, Count: out.Layout.Count, InPlace: inPlace,
					Ranks: ranks, Iters: out.Iters, TimeS: out.Seconds, AlgBWGBps: alg / 1e9, BusBWGBps: bus / 1e9, Wrong: out.Wrong}
				res.NCCL = append(res.NCCL, row)
				times = append(times, cluster.CollectiveTimes{Op: string(op), Bytes: row.Bytes, InPlace: inPlace, RankTimesS: out.RankSeconds})
				r.metric(fmt.Sprintf("nccl.%s.%d.%s.busbw_gbps", op, row.Bytes, strings.ReplaceAll(placeName(inPlace), " ", "_")), row.BusBWGBps, "GB/s")
			}
		}
	}
	v.Failures = append(v.Failures, ncclFailures(c, res.NCCL)...)
	r.logTable(ncclTable(res))
	return v, times
}

// judgeStragglers publishes this node's times; node 0 then waits for every
// node's and names the ranks slower than the median by more than
// max_straggler_ratio.
func (r *Runner) judgeStragglers(ctx context.Context, c *NCCLConfig, res *Results, times []cluster.CollectiveTimes) []string {
	if err := r.Job.WriteTimes(cluster.NodeTimes{Collectives: times}); err != nil {
		return []string{err.Error()}
	}
	if r.Job.NodeRank != 0 {
		return nil
	}
	all, err := r.Job.AwaitTimes(ctx)
	if err != nil {
		return []string{"straggler detection: " + err.Error()}
	}
	res.Stragglers = cluster.Stragglers(all, c.MaxStragglerRatio)
	r.logTable(stragglerTable(res))
	return stragglerFailures(c, res.Stragglers)
}

// placements is out of place, then in place when asked.
func placements(inPlace bool) []bool {
	if inPlace {
		return []bool{false, true}
	}
	return []bool{false}
}

func (r *Runner) send(e api.Event) {
	e.Time = r.Now()
	r.Sink.Send(e)
}

func (r *Runner) progress(label string, done, total float64, unit string) {
	r.send(api.Event{Progress: &api.Progress{Label: label, Done: done, Total: total, Unit: unit}})
}

func (r *Runner) metric(name string, value float64, unit string) {
	r.send(api.Event{Metric: &api.Metric{Name: name, Value: value, Unit: unit}})
}

func (r *Runner) log(level, msg string) {
	r.send(api.Event{Log: &api.Log{Level: level, Message: msg}})
}

func (r *Runner) logTable(t string) {
	for _, line := range strings.Split(strings.TrimRight(t, "\n"), "\n") {
		r.log("info", line)
	}
}

func (r *Runner) logVerdict(v Verdict) {
	switch {
	case v.Skipped != "":
		r.log("info", fmt.Sprintf("%s: skipped (%s)", v.Check, v.Skipped))
	case v.Passed:
		r.log("info", v.Check+": PASS")
	default:
		r.log("error", fmt.Sprintf("%s: FAIL: %s", v.Check, strings.Join(v.Failures, "; ")))
	}
}

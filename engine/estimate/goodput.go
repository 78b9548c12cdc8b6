package estimate

import "math"

// Goodput is what failures and checkpoints make of a stage's budget at
// scale: the expected interruptions over the run, what a checkpoint costs
// to write and to load again, the Young-Daly checkpoint interval, and the
// expected share of wall time that trains.
type Goodput struct {
	// CheckpointBytes is the whole model's checkpoint: the weights and
	// optimizer states of every trained parameter (LoRA: the adapters).
	CheckpointBytes int64 `json:"checkpoint_bytes"`
	// CheckpointWriteS blocks training once per checkpoint; RestartS loads
	// the last checkpoint after an interruption.
	CheckpointWriteS float64 `json:"checkpoint_write_s"`
	RestartS         float64 `json:"restart_s"`
	// MeanTimeBetweenInterruptionsS is the job's, from its GPUs' and
	// nodes' failure rates.
	MeanTimeBetweenInterruptionsS float64 `json:"mean_time_between_interruptions_s"`
	ExpectedInterruptions         float64 `json:"expected_interruptions"`
	// OptimalIntervalS is Young and Daly's sqrt(2 x write x MTBI);
	// IntervalS the stage's checkpoint_every in seconds, or the optimum
	// when it sets none.
	OptimalIntervalS float64 `json:"optimal_checkpoint_interval_s"`
	IntervalS        float64 `json:"checkpoint_interval_s"`
	// Goodput is the budget's training time over the expected wall time
	// (WallTimeS); 0 when interruptions outpace progress.
	Goodput   float64 `json:"goodput"`
	WallTimeS float64 `json:"wall_time_s"`
}

// goodput fills e.Goodput from the budget's duration. Each interruption
// loses, on average, half an interval of work and the write of the
// checkpoint it interrupted, and pays a restart; every interval pays one
// write. Interruptions arrive over the wall time, so
// wall = duration x (1 + write/interval) / (1 - (restart + (interval + write)/2) / MTBI).
func (j *job) goodput(e *Estimate) {
	if e.DurationS <= 0 {
		return
	}
	hw := j.in.Hardware
	gpuRate, nodeRate, write, read := hw.Reliability()
	gpus := j.l.WorldSize()
	nodes := (gpus + hw.GPU.PerNode - 1) / hw.GPU.PerNode
	perHour := float64(gpus)*gpuRate + float64(nodes)*nodeRate
	g := Goodput{MeanTimeBetweenInterruptionsS: 3600 / perHour}
	trained := j.params
	if j.in.LoRA != nil {
		trained = j.adapters
	}
	g.CheckpointBytes = int64(trained * (j.fw.WeightBytes + j.fw.OptimizerBytes))
	g.CheckpointWriteS = float64(g.CheckpointBytes) / (float64(nodes) * write)
	g.RestartS = float64(g.CheckpointBytes) / (float64(nodes) * read)
	g.OptimalIntervalS = math.Sqrt(2 * g.CheckpointWriteS * g.MeanTimeBetweenInterruptionsS)
	g.IntervalS = g.OptimalIntervalS
	if j.in.CheckpointEvery > 0 {
		g.IntervalS = float64(j.in.CheckpointEvery) * e.StepTimeS
	}
	if g.Goodput = goodputAt(&g, e.DurationS, g.IntervalS); g.Goodput > 0 {
		g.WallTimeS = e.DurationS / g.Goodput
		g.ExpectedInterruptions = g.WallTimeS / g.MeanTimeBetweenInterruptionsS
	}
	e.Goodput = &g
}

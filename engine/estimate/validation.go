package estimate

import (
	"math"

	"github.com/gpuflow/gpuflow/engine/layout"
)

// Validation is a training stage's validations: one every Every steps (0:
// none but the last) and one after the last step, each running the model
// forward over Batches global batches of held-out data.
type Validation struct {
	Every, Batches int64
}

// ValidationEstimate is what a stage's validations cost. JSON keys are SI
// and name their unit.
type ValidationEstimate struct {
	Count int64 `json:"count"`
	// EachS is one validation's time; DurationS all of them, counted in
	// the stage's duration.
	EachS     float64 `json:"each_s"`
	DurationS float64 `json:"duration_s"`
	// PeakBytes is a validation's own transient (one layer's forward and
	// one micro-batch's logits); AddedBytes what it adds to the stage's
	// peak, where it exceeds what training holds at its own.
	PeakBytes  int64 `json:"peak_bytes"`
	AddedBytes int64 `json:"added_bytes"`
}

// Validation logits: gpuflow's trainer's loss reads the bf16 logits as
// they are (Framework.LossInPlace); an eager F.cross_entropy keeps an
// fp32 copy and its fp32 log-softmax beside them (forwardLogitBytes).
const validationLogitBytes = 2

// validations is how many a run of steps validates: every every steps and
// after the last.
func validations(steps, every int64) int64 {
	if steps <= 0 {
		return 0
	}
	if every <= 0 {
		return 1
	}
	n := steps / every
	if steps%every != 0 {
		n++
	}
	return n
}

// validationTime fills e.Validation's count and times and returns the
// validations' whole time. A validation runs in the layout's
// micro-batches, forward only: each micro-batch takes the forward's share
// of a training micro-batch (its products, element-wise kernels, exposed
// tensor and context parallel communication and host time alike), and a
// pipeline passes each global batch's micro-batches through its stages in
// turn, filling and draining once per batch.
func (j *job) validationTime(e *Estimate) float64 {
	e.Validation = nil
	v := j.in.Validation
	if v == nil || j.in.Forward || e.Steps == 0 {
		return 0
	}
	p := j.parts()
	gpu := p.microCompute + p.tpExposed + p.cpExposed
	fwd := j.forwardShare(p.microCompute) * j.microTime(gpu, j.hostTime())
	perBatch := fwd * (float64(j.micro) + float64(j.l.PP-1)/float64(layout.VirtualStages(j.l)))
	val := *j.validation
	val.Count = validations(e.Steps, v.Every)
	val.EachS = float64(v.Batches) * perBatch
	val.DurationS = float64(val.Count) * val.EachS
	e.Validation = &val
	return val.DurationS
}

// addValidationMemory adds to the training peak m what the stage's
// validations add to it, and keeps their figures for validationTime.
func (j *job) addValidationMemory(m *Memory) {
	if j.in.Validation == nil || j.in.Forward {
		return
	}
	j.validation = j.validationMemory(*m)
	m.Activations += j.validation.AddedBytes
	m.Total += j.validation.AddedBytes
}

// validationMemory is a validation's transient and what it adds to the
// training peak m: it runs between steps, when the activations training
// held at its peak are freed (and the gradients, where the framework
// frees them after each step), so it adds only where one layer's forward
// and one micro-batch's logits exceed them.
func (j *job) validationMemory(m Memory) *ValidationEstimate {
	s, l := j.in.Model, j.l
	seq, b, t := float64(s.SeqLen), float64(l.MicroBatch), float64(l.TP)
	bytes := float64(forwardLogitBytes)
	if j.fw.LossInPlace {
		bytes = validationLogitBytes
	}
	layer := layerActivations(s, seq, b, l.TP, l.SequenceParallel, layout.RecomputeNone, j.fw.materialized())
	peak := layer + seq*b*float64(s.Vocab)*bytes/t
	freed := float64(m.Activations)
	if j.fw.GradientsFreed {
		freed += float64(m.Gradients)
	}
	added := max(0, peak-freed)
	return &ValidationEstimate{PeakBytes: int64(math.Round(peak)), AddedBytes: int64(math.Round(added))}
}

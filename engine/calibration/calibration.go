package calibration

import (
	"fmt"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
)

// FormatVersion is the calibration file format this package writes.
const FormatVersion = 1

// DefaultPath is where a workload's calibration lives unless the user
// points at a file they commit.
const DefaultPath = ".gpuflow/calibration.json"

// File is a whole calibration file.
type File struct {
	FormatVersion int `json:"format_version"`
	// Profiles maps a hardware profile name to what was measured on it.
	Profiles map[string]*Profile `json:"profiles"`
	// Frameworks maps a training framework's name to the figures of its
	// accounting fitted to measured runs (the estimator ships its own
	// trainer's fit in this format).
	Frameworks map[string]*FrameworkFit `json:"frameworks,omitempty"`
}

// FrameworkFit holds the figures of a training framework's accounting
// that are fitted to runs rather than derived.
type FrameworkFit struct {
	// GEMMShare: the matrix products' and attention's time over the
	// step's compute time, less the optimizer step, with the products at
	// the default GEMM efficiency and attention at its own rate where the
	// framework's kernel was measured (the estimator's attentionRate).
	GEMMShare float64 `json:"gemm_share"`
	// ActivationCoefficient scales the Korthikanti activation count.
	ActivationCoefficient float64 `json:"activation_coefficient"`
	// ReserveBytes and ReserveBytesWithPeers: peak reserved memory plus
	// what the process holds outside PyTorch, less peak allocated, less
	// the gradients' pool, on one GPU and with peers to talk to.
	ReserveBytes          float64 `json:"reserve_bytes"`
	ReserveBytesWithPeers float64 `json:"reserve_bytes_with_peers"`
	// AllocatorSlack is what the allocator keeps beyond that, as a share
	// of the activations.
	AllocatorSlack float64 `json:"allocator_slack,omitempty"`
	// HostSPerLayer is the host's time to launch one layer's work.
	HostSPerLayer float64 `json:"host_s_per_layer"`
	// HostSPerLayerAlone and HostSPerStepAlone: the host's time per layer
	// and micro-batch, and per step, on one GPU alone, where the
	// framework runs without its sharding hooks and nothing ties the host
	// to the GPU within a step.
	HostSPerLayerAlone float64 `json:"host_s_per_layer_alone,omitempty"`
	HostSPerStepAlone  float64 `json:"host_s_per_step_alone,omitempty"`
	// HostSPerTPCollectiveSpread is the spread of the host time added at
	// each tensor-parallel collective, and CouplingExponent how host and
	// GPU times combine under tensor or pipeline parallelism.
	HostSPerTPCollectiveSpread float64 `json:"host_s_per_tp_collective_spread"`
	CouplingExponent           float64 `json:"coupling_exponent"`
}

// Profile holds the figures measured on one hardware profile.
type Profile struct {
	// GEMMEfficiency is achieved over dense datasheet TFLOP/s, per
	// precision ("bf16", "fp8", ...), a fraction in (0, 1].
	GEMMEfficiency map[string]float64 `json:"gemm_efficiency,omitempty"`
	// BusBWGBps is the nccl-tests bus bandwidth of large collectives in
	// gigabytes per second, per link kind ("nvlink", "pcie", "network").
	BusBWGBps map[string]float64 `json:"busbw_gbps,omitempty"`
	// ActivationCoefficient scales the Korthikanti activation count, per
	// training framework name.
	ActivationCoefficient map[string]float64 `json:"activation_coefficient,omitempty"`
	// Runs are whole training runs, one per key (see RunKey).
	Runs []Run `json:"runs,omitempty"`
}

// Run is one training run's measured throughput and memory.
type Run struct {
	Key             string  `json:"key"`
	TokensPerS      float64 `json:"tokens_per_s"`
	PeakMemoryBytes int64   `json:"peak_memory_bytes"`
}

// New returns an empty file of the current format.
func New() *File {
	return &File{FormatVersion: FormatVersion, Profiles: map[string]*Profile{}}
}

// For returns the figures for a hardware profile, or nil when nothing was
// measured on it. It is safe on a nil File.
func (f *File) For(profile string) *Profile {
	if f == nil {
		return nil
	}
	return f.Profiles[profile]
}

// profile returns the entry for a profile, creating it.
func (f *File) profile(name string) *Profile {
	if f.Profiles == nil {
		f.Profiles = map[string]*Profile{}
	}
	p := f.Profiles[name]
	if p == nil {
		p = &Profile{}
		f.Profiles[name] = p
	}
	return p
}

// RecordGEMM stores a measured GEMM efficiency for a precision.
func (f *File) RecordGEMM(profile, precision string, efficiency float64) error {
	if efficiency <= 0 || efficiency > 1 {
		return fmt.Errorf("GEMM efficiency %g for %s is not a fraction of peak in (0, 1]", efficiency, precision)
	}
	p := f.profile(profile)
	p.GEMMEfficiency = setKey(p.GEMMEfficiency, precision, efficiency)
	return nil
}

// RecordBusBW stores a measured bus bandwidth (GB/s) for a link kind.
func (f *File) RecordBusBW(profile, link string, gbps float64) error {
	if gbps <= 0 {
		return fmt.Errorf("bus bandwidth %g GB/s for %s is not positive", gbps, link)
	}
	p := f.profile(profile)
	p.BusBWGBps = setKey(p.BusBWGBps, link, gbps)
	return nil
}

// RecordActivationCoefficient stores a framework's measured activation
// coefficient.
func (f *File) RecordActivationCoefficient(profile, framework string, c float64) error {
	if c <= 0 {
		return fmt.Errorf("activation coefficient %g for %s is not positive", c, framework)
	}
	p := f.profile(profile)
	p.ActivationCoefficient = setKey(p.ActivationCoefficient, framework, c)
	return nil
}

// RecordRun stores a training run, replacing an earlier one with the same key.
func (f *File) RecordRun(profile string, r Run) error {
	if r.TokensPerS <= 0 && r.PeakMemoryBytes <= 0 {
		return fmt.Errorf("run %q has neither tokens/s nor peak memory", r.Key)
	}
	p := f.profile(profile)
	for i := range p.Runs {
		if p.Runs[i].Key == r.Key {
			p.Runs[i] = r
			return nil
		}
	}
	p.Runs = append(p.Runs, r)
	return nil
}

// Run returns the run recorded under key.
func (p *Profile) Run(key string) (Run, bool) {
	if p == nil {
		return Run{}, false
	}
	for _, r := range p.Runs {
		if r.Key == key {
			return r, true
		}
	}
	return Run{}, false
}

func setKey(m map[string]float64, k string, v float64) map[string]float64 {
	if m == nil {
		m = map[string]float64{}
	}
	m[k] = v
	return m
}

// RunKey identifies a training configuration: the framework, the adapters
// trained ("" for the whole model, else as estimate.LoRA.Key gives them),
// every field of the model shape and of the layout. Two runs share a key
// only when a measurement of one stands for the other: a LoRA fine-tune
// never stands for a pre-train of the same shape.
func RunKey(framework, adapters string, s model.Shape, l layout.Layout) string {
	return fmt.Sprintf("%s|%s|L%d h%d f%d a%d kv%d v%d s%d tied=%t %s|tp%d pp%d dp%d cp%d vp%d zero%d fsdp=%t mb%d gb%d rc=%s sp=%t %s",
		framework, adapters,
		s.Layers, s.Hidden, s.FFNHidden, s.Heads, s.KVHeads, s.Vocab, s.SeqLen, s.TiedEmbeddings, s.Activation,
		l.TP, l.PP, l.DP, l.CP, layout.VirtualStages(l), l.ZeRO, l.FSDP, l.MicroBatch, l.GlobalBatch, l.Recompute, l.SequenceParallel, l.Precision)
}

// GEMM returns the measured GEMM efficiency for a precision. It is safe
// on a nil Profile, as are the other lookups.
func (p *Profile) GEMM(precision string) (float64, bool) {
	return lookup(p, func(p *Profile) map[string]float64 { return p.GEMMEfficiency }, precision)
}

// BusBW returns the measured bus bandwidth of a link kind in bytes/s.
func (p *Profile) BusBW(link string) (float64, bool) {
	v, ok := lookup(p, func(p *Profile) map[string]float64 { return p.BusBWGBps }, link)
	return v * 1e9, ok
}

// Activation returns the measured activation coefficient of a framework.
func (p *Profile) Activation(framework string) (float64, bool) {
	return lookup(p, func(p *Profile) map[string]float64 { return p.ActivationCoefficient }, framework)
}

func lookup(p *Profile, field func(*Profile) map[string]float64, key string) (float64, bool) {
	if p == nil {
		return 0, false
	}
	v, ok := field(p)[key]
	return v, ok && v > 0
}

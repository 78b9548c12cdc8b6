package autolayout

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// Objectives a search can rank by.
const (
	// ObjectiveThroughput maximises tokens/s on all the stage's GPUs.
	ObjectiveThroughput = "throughput"
	// ObjectiveCost minimises dollars per token, and may use fewer GPUs:
	// any divisor of the stage's GPU count.
	ObjectiveCost = "cost"
)

// RunnersUp is how many layouts after the choice a Result lists.
const RunnersUp = 5

// Request is a training stage whose layout is to be found.
type Request struct {
	Model    model.Shape
	Hardware *hardware.Profile
	// GPUs the stage may use; 0 means all of Hardware.
	GPUs int
	// GlobalBatch is the sequences per optimizer step, a training choice
	// the search keeps.
	GlobalBatch int
	// Precision is "bf16" (the default) or "fp8".
	Precision string
	// Framework names an estimate framework; it decides the sharding
	// choices (Megatron: ZeRO 0 or 1; DeepSpeed: 0-3; eager: none; FSDP2:
	// FSDP; gpuflow's trainer: none or FSDP) and whether sequence and
	// context parallelism are available (gpuflow's trainer has no CP).
	Framework string
	LoRA      *estimate.LoRA
	Objective string
	// Limits narrow the search; zero means no limit.
	Limits Limits
	// Budget and calibration, passed to every estimate.
	TrainTokens float64
	TrainSteps  int64
	Calibration *calibration.Profile
}

// Limits bound the degrees searched.
type Limits struct {
	MaxTP, MaxPP, MaxCP, MaxVP int
	// MaxMicroBatch defaults to DefaultMaxMicroBatch.
	MaxMicroBatch int
	// MinCPChunk is the fewest tokens of a sequence per CP rank;
	// it defaults to DefaultMinCPChunk.
	MinCPChunk int
}

// DefaultMinCPChunk keeps context parallelism to chunks of at least
// 4,096 tokens, the chunk of the published Llama 3.1 70B recipe (CP2 at
// sequence 8,192). The estimator does not model the lower efficiency of
// attention on short chunks, so without this floor the search would
// split sequences further than anyone runs them.
const DefaultMinCPChunk = 4096

// DefaultMaxMicroBatch bounds micro-batches unless Limits says otherwise.
const DefaultMaxMicroBatch = 16

// Candidate is one layout with its estimate.
type Candidate struct {
	Layout   layout.Layout      `json:"layout"`
	Estimate *estimate.Estimate `json:"estimate"`
	// Reason says in one line why it lost to the choice; empty for the
	// choice itself.
	Reason string `json:"reason,omitempty"`
}

// Result is the outcome of a search.
type Result struct {
	Objective string      `json:"objective"`
	Choice    Candidate   `json:"choice"`
	RunnersUp []Candidate `json:"runners_up"`
	// Considered counts layouts estimated; Fitting those that passed
	// validation and fit in memory.
	Considered int `json:"considered"`
	Fitting    int `json:"fitting"`
}

// ErrNoLayout is returned when no layout fits.
var ErrNoLayout = errors.New("no layout fits")

// Search enumerates layouts and returns the best under the objective.
// A layout fits when the estimate finds no error and memory stays within
// 90% of capacity.
func Search(r Request) (*Result, error) {
	s, err := newSearch(r)
	if err != nil {
		return nil, err
	}
	var fits []Candidate
	for _, world := range s.worlds() {
		for _, l := range s.layouts(world) {
			if c, ok := s.evaluate(l); ok {
				fits = append(fits, c)
			}
		}
	}
	if len(fits) == 0 {
		return nil, fmt.Errorf("%w: none of %d layouts for %d GPUs passes validation and fits in %.0f GiB per GPU; add GPUs, lower global_batch, or use a sharding framework",
			ErrNoLayout, s.considered, s.gpus, float64(r.Hardware.GPU.MemoryBytes)/(1<<30))
	}
	sort.SliceStable(fits, func(a, b int) bool { return s.better(fits[a], fits[b]) })
	res := &Result{Objective: s.objective, Choice: fits[0], Considered: s.considered, Fitting: len(fits)}
	for _, c := range fits[1:min(len(fits), RunnersUp+1)] {
		c.Reason = s.whyLost(c, res.Choice)
		res.RunnersUp = append(res.RunnersUp, c)
	}
	return res, nil
}

// search carries a Request with its defaults applied and caches.
type search struct {
	r          Request
	gpus       int
	objective  string
	shardings  []sharding
	seqPar     bool
	considered int
	placements map[[4]int]*layout.Placement
}

// sharding is one ZeRO/FSDP choice.
type sharding struct {
	zero int
	fsdp bool
}

func newSearch(r Request) (*search, error) {
	if r.Hardware == nil || r.Hardware.TotalGPUs() < 1 {
		return nil, errors.New("no hardware to search layouts on")
	}
	if r.GlobalBatch < 1 {
		return nil, errors.New("a layout search needs the global batch (sequences per step); set global_batch")
	}
	fw, err := estimate.LookupFramework(r.Framework)
	if err != nil {
		return nil, err
	}
	s := &search{r: r, gpus: r.GPUs, objective: r.Objective, placements: map[[4]int]*layout.Placement{}}
	if s.gpus <= 0 {
		s.gpus = r.Hardware.TotalGPUs()
	}
	if s.gpus > r.Hardware.TotalGPUs() {
		return nil, fmt.Errorf("the stage asks for %d GPUs but hardware %q has %d", s.gpus, r.Hardware.Name, r.Hardware.TotalGPUs())
	}
	switch s.objective {
	case "":
		s.objective = ObjectiveThroughput
	case ObjectiveThroughput, ObjectiveCost:
	default:
		return nil, fmt.Errorf("unknown objective %q; use %q or %q", r.Objective, ObjectiveThroughput, ObjectiveCost)
	}
	if s.r.Precision == "" {
		s.r.Precision = hardware.PrecisionBF16
	}
	var cp bool
	s.shardings, s.seqPar, cp = choicesFor(fw.Name)
	if !cp {
		s.r.Limits.MaxCP = 1
	}
	return s, nil
}

// choicesFor is what each framework can do: its sharding choices, and
// whether it has sequence and context parallelism.
func choicesFor(framework string) (shardings []sharding, seqPar, cp bool) {
	switch framework {
	case estimate.FrameworkDeepSpeed:
		return []sharding{{zero: 0}, {zero: 1}, {zero: 2}, {zero: 3}}, false, true
	case estimate.FrameworkEager:
		return []sharding{{zero: 0}}, false, true
	case estimate.FrameworkFSDP2:
		return []sharding{{fsdp: true}}, false, true
	case estimate.FrameworkGpuflow, estimate.FrameworkGpuflowEager:
		// gpuflow's trainer: replicated or fully sharded, SP with TP, no CP.
		return []sharding{{zero: 0}, {fsdp: true}}, true, false
	default: // Megatron: DDP or the distributed optimizer, with SP.
		return []sharding{{zero: 0}, {zero: 1}}, true, true
	}
}

// worlds are the GPU counts searched: all the stage's GPUs for
// throughput, every divisor of them for cost.
func (s *search) worlds() []int {
	if s.objective == ObjectiveThroughput {
		return []int{s.gpus}
	}
	return divisors(s.gpus)
}

// evaluate validates and estimates one layout; ok is false when it breaks
// a rule or does not fit.
func (s *search) evaluate(l layout.Layout) (Candidate, bool) {
	s.considered++
	if layout.Errors(layout.Validate(l, s.r.Model, s.r.Hardware, l.WorldSize())) {
		return Candidate{}, false
	}
	e, err := estimate.Compute(estimate.Input{
		Model: s.r.Model, Layout: l, Hardware: s.r.Hardware, Placement: s.place(l),
		Framework: s.r.Framework, LoRA: s.r.LoRA, TrainTokens: s.r.TrainTokens, TrainSteps: s.r.TrainSteps,
		Calibration: s.r.Calibration,
	})
	if err != nil || layout.Errors(e.Findings) || nearlyFull(e) {
		return Candidate{}, false
	}
	return Candidate{Layout: l, Estimate: e}, true
}

// place caches placements: they depend on the four degrees only.
func (s *search) place(l layout.Layout) *layout.Placement {
	key := [4]int{l.TP, l.CP, l.DP, l.PP}
	if p, ok := s.placements[key]; ok {
		return p
	}
	p, err := layout.Place(l, s.r.Hardware)
	if err != nil {
		return nil
	}
	s.placements[key] = p
	return p
}

func divisors(n int) []int {
	var ds []int
	for d := 1; d <= n; d++ {
		if n%d == 0 {
			ds = append(ds, d)
		}
	}
	return ds
}

// nearlyFull: the search leaves the estimator's 10% headroom (the
// memory-over-90 warning) for fragmentation and what it does not count.
func nearlyFull(e *estimate.Estimate) bool {
	for _, f := range e.Findings {
		if f.Rule == "memory-over-90" {
			return true
		}
	}
	return false
}

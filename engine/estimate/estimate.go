package estimate

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// Input is one training stage to estimate, or with Forward set, a stage
// that runs the model forward only (an evaluation: forward.go).
type Input struct {
	Model    model.Shape
	Layout   layout.Layout
	Hardware *hardware.Profile
	// Placement is the layout placed on Hardware; nil places it here.
	Placement *layout.Placement
	// Framework names a built-in framework ("" means DefaultFramework).
	Framework string
	// LoRA, when set, trains adapters on a frozen model.
	LoRA *LoRA
	// The budget: TrainTokens, else TrainSteps; with neither, duration,
	// cost and energy are zero.
	TrainTokens float64
	TrainSteps  int64
	// CheckpointEvery is the stage's steps between checkpoints (0: none
	// set; the goodput then assumes the optimal interval).
	CheckpointEvery int64
	// Calibration holds figures measured on this hardware profile; nil
	// uses defaults throughout.
	Calibration *calibration.Profile
	// GatheredLogits estimates gpuflow's trainer as it ran before loss
	// parallelism, with the logits gathered whole on every tensor-parallel
	// rank, so that runs measured then still check the rest of the
	// accounting.
	GatheredLogits bool
	// EagerFP32Loss estimates gpuflow's eager trainer as it ran before its
	// loss was the trainer's own kernels (eager F.cross_entropy, with fp32
	// copies of the logits), so that runs measured then still check the
	// rest of the accounting.
	EagerFP32Loss bool
	// FSDP2OnOneGPU estimates gpuflow's trainer as it ran before it
	// skipped FSDP2 on one GPU alone, so that runs measured then still
	// check the rest of the accounting.
	FSDP2OnOneGPU bool
	// FusedAdamWAlone estimates gpuflow's trainer as it ran before its
	// one-GPU AdamW wrote the compute copy's weights (fused AdamW, then
	// a cast before the forward), so that runs measured then keep the
	// step they paid.
	FusedAdamWAlone bool
	// Forward: the stage runs the model forward over its TrainTokens, and
	// trains nothing.
	Forward bool
	// Validation, when set, is the training stage's validations.
	Validation *Validation
}

// Estimate is the prediction for one training stage. JSON keys are SI and
// name their unit.
type Estimate struct {
	Framework string `json:"framework"`
	// Adapters names the LoRA adapters trained ("" when the whole model
	// trains), as calibration run keys spell them.
	Adapters        string  `json:"adapters,omitempty"`
	Params          int64   `json:"params"`
	TrainableParams int64   `json:"trainable_params"`
	FLOPsPerToken   float64 `json:"flops_per_token"`
	// AttentionCausal is false: FLOPsPerToken counts the full s*s
	// attention square (12*L*h*s), the convention MFU is quoted in, with
	// a sliding window's span instead of s where it is shorter.
	AttentionCausal     bool    `json:"attention_causal"`
	Memory              Memory  `json:"memory_bytes"`
	MemoryCapacityBytes int64   `json:"memory_capacity_bytes"`
	StepTimeS           float64 `json:"step_time_s"`
	// ComputeS is the step's compute on one GPU, bubble excluded;
	// OptimizerS the once-per-step optimizer work.
	ComputeS   float64 `json:"compute_s"`
	OptimizerS float64 `json:"optimizer_s"`
	// HostWaitS is the part of the step the GPU waits for the host to
	// launch its work (small models); absent when the GPU sets the pace.
	HostWaitS        float64 `json:"host_wait_s,omitempty"`
	TokensPerS       float64 `json:"tokens_per_s"`
	TokensPerSPerGPU float64 `json:"tokens_per_s_per_gpu"`
	// MFU is model FLOPs over the dense datasheet peak of the layout's
	// precision, recomputation not counted.
	MFU float64 `json:"mfu"`
	// ModelTFLOPSPerGPU is achieved model FLOPs per second per GPU (the
	// count MFU uses, recomputation not counted); HardwareTFLOPSPerGPU
	// counts the FLOPs executed, recomputation included and, where the
	// framework reads them (Framework.LookupsRead), an untied embedding's
	// and learned positions' lookups left out, so it can fall below the
	// model figure. Megatron-LM reports the latter, torchtitan the former.
	ModelTFLOPSPerGPU    float64 `json:"model_tflops_per_gpu"`
	HardwareTFLOPSPerGPU float64 `json:"hardware_tflops_per_gpu"`
	Steps                int64   `json:"steps"`
	DurationS            float64 `json:"duration_s"`
	CostUSD              float64 `json:"cost_usd"`
	// EnergyKWh is the GPUs at their TDP while they work (not in the
	// pipeline bubble or waiting for the host) plus each node's overhead
	// over the whole duration.
	EnergyKWh float64 `json:"energy_kwh"`
	// Goodput weighs the budget against failures and checkpoints; absent
	// without a budget.
	Goodput *Goodput `json:"goodput,omitempty"`
	// Validation is the stage's validations, counted in DurationS, the
	// cost and the energy, and in Memory where they add to the peak;
	// absent for a stage that runs none or has no budget.
	Validation *ValidationEstimate `json:"validation,omitempty"`
	// CommS is each parallel kind's communication per step;
	// ExposedCommS the part not hidden behind compute.
	CommS        Comm `json:"comm_s"`
	ExposedCommS Comm `json:"exposed_comm_s"`
	// BubbleFraction is pipeline idle time over ideal compute,
	// (pp-1)/(vp*m).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Calibrated names the figures that came from measurements, e.g.
	// "gemm_efficiency.bf16", "busbw.nvlink", "activation_coefficient",
	// "tokens_per_s", "memory_bytes.total". Empty means all datasheet.
	Calibrated []string         `json:"calibrated"`
	Findings   []layout.Finding `json:"findings,omitempty"`
}

// Comm is seconds per step per parallel kind.
type Comm struct {
	TP float64 `json:"tp"`
	PP float64 `json:"pp"`
	DP float64 `json:"dp"`
	CP float64 `json:"cp"`
}

// Compute estimates a training stage. It returns an error for input no
// estimate can be made of (non-positive degrees or shape, a layout larger
// than the hardware, a precision the GPU lacks, a bad LoRA); a layout that
// merely strains the hardware yields findings instead.
func Compute(in Input) (*Estimate, error) {
	j, err := newJob(in)
	if err != nil {
		return nil, err
	}
	e := &Estimate{
		Framework:           j.fw.Name,
		Adapters:            in.LoRA.Key(),
		Params:              int64(math.Round(j.params)),
		TrainableParams:     int64(math.Round(j.trainable())),
		FLOPsPerToken:       j.flops.model,
		MemoryCapacityBytes: in.Hardware.GPU.MemoryBytes,
	}
	if in.Forward {
		j.computeForward(e)
		e.Calibrated = j.calibratedList()
		e.Findings = forwardFindings(e)
		return e, nil
	}
	e.Memory = j.memory()
	j.addValidationMemory(&e.Memory)
	j.time(e)
	j.budget(e)
	j.applyRuns(e)
	e.Calibrated = j.calibratedList()
	e.Findings = j.findings(e)
	return e, nil
}

// job is an Input with everything derived that later steps share.
type job struct {
	in       Input
	l        layout.Layout
	fw       Framework
	place    *layout.Placement
	counts   counts.Params
	params   float64 // whole model
	adapters float64 // whole model's LoRA parameters
	stageP   float64 // parameters on the most loaded GPU before DP sharding
	stageA   float64 // adapter parameters on it
	// adapterWidth is the summed input+output width of one layer's
	// adapted matrices.
	adapterWidth float64
	// adapted names the layer matrices with adapters (nil without LoRA).
	adapted map[string]bool
	layers  float64 // layers per pipeline rank in the even split
	// stageLayers are the layers on each pipeline rank (all equal to
	// layers unless the layout sets first_stage_layers or
	// last_stage_layers); slotLayers is the most of them, the stage
	// that sets the pipeline's pace.
	stageLayers []float64
	slotLayers  float64
	// unevenSplit: the ranks hold different numbers of layers (counts
	// that equal the even share plan as the even split does).
	unevenSplit bool
	// rankAdapters is one layer's adapter parameters on a rank;
	// heavyLayers the layers of the rank stageP and stageA describe.
	rankAdapters float64
	heavyLayers  float64
	// heavyFirst: that rank is the first pipeline stage, which holds the
	// input embedding.
	heavyFirst bool
	micro      int // micro-batches per step per DP rank
	flops      flops
	links      *links
	coeff      float64
	calibrate  map[string]bool
	// validation is the validations' memory figures (addValidationMemory).
	validation *ValidationEstimate
}

func newJob(in Input) (*job, error) {
	if err := checkInput(in); err != nil {
		return nil, err
	}
	fw, err := LookupFramework(in.Framework)
	if err != nil {
		return nil, err
	}
	fw = fw.withOptions(in.Layout)
	fw.GathersLogits = in.GatheredLogits && fw.DTensorTP
	if in.EagerFP32Loss && fw.Name == FrameworkGpuflowEager {
		fw.LogitBytes = trainerEagerFP32LogitBytes
		fw.LossInPlace = false // its validations took the same fp32 copies
	}
	fw.AloneWithoutFSDP2 = fw.AloneWithoutFSDP2 && !in.FSDP2OnOneGPU
	j := &job{in: in, l: in.Layout, fw: fw, place: in.Placement, coeff: fw.ActivationCoefficient, calibrate: map[string]bool{}}
	if j.place == nil {
		if j.place, err = layout.Place(in.Layout, in.Hardware); err != nil {
			return nil, err
		}
	}
	// Before the counts: a pipeline rank's micro-batches in flight read it.
	j.micro = max(1, in.Layout.GradAccumulation())
	if err := j.countParams(); err != nil {
		return nil, err
	}
	j.flops = j.countFLOPs(j.lookups())
	j.links = &links{hw: in.Hardware, cal: in.Calibration, calibrated: map[string]bool{}}
	if c, ok := in.Calibration.Activation(fw.Name); ok {
		j.coeff = c
		j.calibrate["activation_coefficient"] = true
	}
	return j, nil
}

func checkInput(in Input) error {
	l, s, hw := in.Layout, in.Model, in.Hardware
	switch {
	case hw == nil || hw.GPU.PerNode < 1 || hw.Nodes < 1:
		return fmt.Errorf("no hardware to estimate on")
	case l.TP < 1 || l.PP < 1 || l.DP < 1 || l.CP < 1 || l.VP < 0 || l.MicroBatch < 1 || l.GlobalBatch < 1:
		return fmt.Errorf("layout degrees and batch sizes must be positive (run layout.Validate first)")
	case s.Layers < 1 || s.Hidden < 1 || s.FFNHidden < 1 || s.Heads < 1 || s.KVHeads < 1 || s.Vocab < 1 || s.SeqLen < 1:
		return fmt.Errorf("model shape has a non-positive dimension")
	case s.Layers < l.PP*layout.VirtualStages(l):
		return fmt.Errorf("%d layers cannot fill pp*vp = %d pipeline chunks", s.Layers, l.PP*layout.VirtualStages(l))
	case l.FirstStageLayers < 0 || l.LastStageLayers < 0 || (layout.Uneven(l) && !splits(l, s.Layers)):
		return fmt.Errorf("%d layers do not split over pp = %d as first_stage_layers and last_stage_layers ask (run layout.Validate first)", s.Layers, l.PP)
	case hw.GPU.TFLOPS[precision(l)] <= 0 || hw.GPU.TFLOPS[hardware.PrecisionBF16] <= 0:
		return fmt.Errorf("%s has no dense %s rating to estimate with", hw.GPU.Model, precision(l))
	}
	return nil
}

// splits reports whether the layout's stage layer counts split the layers.
func splits(l layout.Layout, layers int) bool {
	_, ok := layout.StageLayers(l, layers)
	return ok
}

func precision(l layout.Layout) string {
	if l.Precision == "" {
		return hardware.PrecisionBF16
	}
	return l.Precision
}

// countParams counts the model, each pipeline rank's layers, and what the
// most loaded GPU holds (loadedRank).
func (j *job) countParams() error {
	s, l := j.in.Model, j.l
	j.counts = Count(s)
	j.params = j.counts.Total(s.Layers)
	j.layers = float64(s.Layers) / float64(l.PP)
	j.stageLayers = make([]float64, l.PP)
	counts, _ := layout.StageLayers(l, s.Layers)
	for i := range j.stageLayers {
		j.stageLayers[i] = j.layers // an even split, fractional where pp does not divide
		if layout.Uneven(l) {
			j.stageLayers[i] = float64(counts[i])
		}
	}
	j.slotLayers = slices.Max(j.stageLayers)
	j.unevenSplit = slices.Min(j.stageLayers) != j.slotLayers
	if j.in.LoRA != nil {
		per, err := adapterParamsPerLayer(s, *j.in.LoRA)
		if err != nil {
			return err
		}
		j.adapted = adaptedMatrices(s, j.in.LoRA.Targets)
		j.adapterWidth = per / float64(j.in.LoRA.Rank)
		j.adapters = per * float64(s.Layers)
		j.rankAdapters = adaptersOnRank(per, s, *j.in.LoRA, len(j.adapted), l.TP)
	}
	j.loadedRank()
	return nil
}

// loadedRank makes stageP, stageA and heavyLayers those of the most loaded
// GPU: the first pipeline stage (its layers, the input embedding, and with
// one stage the output layer too, split over TP), or, where the layout's
// own counts make the ranks' layers differ, the rank that trains the most
// (adapters under LoRA, weights otherwise): its gradients are reduced and
// its optimizer steps last.
func (j *job) loadedRank() {
	best, bestIndex := j.rank(0), 0
	trained := func(rk pipelineRank) float64 {
		if j.in.LoRA != nil {
			return rk.adapters
		}
		return rk.params
	}
	if j.unevenSplit {
		for _, r := range []int{1, j.l.PP - 1} {
			if rk := j.rank(r); trained(rk) > trained(best) {
				best, bestIndex = rk, r
			}
		}
	}
	j.stageP, j.stageA, j.heavyLayers = best.params, best.adapters, best.layers
	j.heavyFirst = bestIndex == 0
}

// adaptersOnRank is one layer's adapter parameters on one tensor-parallel
// rank. Each adapter is split as its base layer is: A of a column-parallel
// layer (q, k, v, gate, up) and B of a row-parallel one (o, down) face
// the hidden side and stay whole on every rank, the other factor is split.
func adaptersOnRank(per float64, s model.Shape, l LoRA, adapted, tp int) float64 {
	whole := float64(l.Rank) * float64(s.Hidden) * float64(adapted)
	return whole + (per-whole)/float64(tp)
}

func (j *job) trainable() float64 {
	if j.in.LoRA != nil {
		return j.adapters
	}
	return j.params
}

// alone is whether the framework skips FSDP2 for this layout: one GPU
// with no parallelism at all.
func (j *job) alone() bool { return j.fw.AloneWithoutFSDP2 && j.l.WorldSize() == 1 }

// dataShards is the group ZeRO shards over and gradients are reduced in:
// data parallel times context parallel, as Megatron forms it.
func (j *job) dataShards() int { return j.l.DP * j.l.CP }

// memory is the most loaded GPU's peak: the first pipeline stage's, or
// under plain 1F1B the last stage's where its output layer and logits
// outweigh the first stage's micro-batches in flight; where the layout's
// own counts make the ranks' layers differ, the largest of the first,
// second (the most micro-batches in flight of the stages between) and
// last stage's, interleaved or not.
func (j *job) memory() Memory {
	peak := j.stageMemory(j.rank(0))
	consider := func(r pipelineRank) {
		if m := j.stageMemory(r); m.Total > peak.Total {
			peak = m
		}
	}
	if j.l.PP > 1 && (layout.VirtualStages(j.l) == 1 || j.unevenSplit) {
		consider(j.rank(j.l.PP - 1))
	}
	if j.unevenSplit && j.l.PP > 2 {
		consider(j.rank(1))
	}
	return peak
}

// pipelineRank is what one pipeline rank holds: its layers, its
// parameters before DP sharding (split over TP), where it sits, and the
// micro-batches it keeps in flight (zero: the first stage's count, or one
// for the last stage).
type pipelineRank struct {
	layers, params, adapters float64
	last, middle             bool
	inFlight                 float64
}

// rank describes pipeline rank r: the first holds the input embedding
// (and with one stage everything), the last the output layer and final
// norm, the ones between their layers alone, with the micro-batches the
// schedule starts before their first backward: pp - r under 1F1B, and
// pp + (pp - 2r - 1)/vp interleaved (Megatron-LM's warm-up, whose r = 0
// is the first stage's count).
func (j *job) rank(r int) pipelineRank {
	n := j.stageLayers[r]
	t := float64(j.l.TP)
	rk := pipelineRank{layers: n, adapters: j.rankAdapters * n}
	switch {
	case r == 0:
		rk.params = (j.counts.PerLayer*n + j.counts.Embedding) / t
		if j.l.PP == 1 {
			rk.params += (j.counts.Output + j.counts.Extra) / t
		}
	case r == j.l.PP-1:
		rk.params, rk.last = j.lastStageParams(n), true
		if vp := float64(layout.VirtualStages(j.l)); vp > 1 {
			// Interleaved, the last rank too starts micro-batches ahead
			// of its first backward (the warm-up below at r = pp - 1).
			rk.inFlight = float64(j.l.PP) - float64(j.l.PP-1)/vp
		}
	default:
		rk.params, rk.middle = j.counts.PerLayer*n/t, true
		pp, vp := float64(j.l.PP), float64(layout.VirtualStages(j.l))
		rk.inFlight = min(pp-float64(r), float64(j.micro))
		if vp > 1 {
			rk.inFlight = pp + (pp-2*float64(r)-1)/vp
		}
	}
	return rk
}

// lastStageParams is what the last pipeline stage holds: its layers, the
// output layer (a copy of the embedding when tied) and the final norm,
// split over TP.
func (j *job) lastStageParams(layers float64) float64 {
	output := j.counts.Output
	if output == 0 {
		output = j.counts.Embedding
	}
	return (j.counts.PerLayer*layers + output + j.counts.Extra) / float64(j.l.TP)
}

// stageMemory is the peak of a GPU of pipeline rank r.
func (j *job) stageMemory(r pipelineRank) Memory {
	params := r.params
	trained, frozen := params, 0.0
	if j.in.LoRA != nil {
		trained, frozen = r.adapters, params
	}
	st := shardedStates(j.fw, trained, frozen, j.l.ShardingStage(), j.dataShards())
	var pool float64
	if j.fw.GradientPool && !j.alone() && (j.micro == 1 || j.l.PP > 1) {
		// Accumulating without a pipeline, each step's gradients take
		// the blocks the last step's left.
		pool = st.gradients
	}
	if j.fw.FSDP2 && j.l.PP > 1 {
		// The pipeline schedule skips the gradient reduction until a
		// step's last micro-batch, so the stage's gradients build up
		// whole on every rank.
		st.gradients = trained * j.fw.GradBytes
	}
	if j.fw.GradientsFreed && j.micro == 1 && j.l.PP == 1 {
		st.gradients = 0
	}
	act := activations(activationInput{shape: j.in.Model, layout: j.l, fw: j.fw, coeff: j.coeff,
		micro: j.micro, flashAttn: !j.fw.materialized(), layerCount: r.layers, adapted: j.adapted, lastStage: r.last,
		middleStage: r.middle, inFlight: r.inFlight})
	other := j.fw.reserve(j.l.WorldSize()) + j.gathered(r) + pool + j.fw.AllocatorSlack*act
	m := Memory{
		Weights: int64(st.weights), Gradients: int64(st.gradients), Optimizer: int64(st.optimizer),
		Activations: int64(act), Other: int64(other),
	}
	m.Total = m.Weights + m.Gradients + m.Optimizer + m.Activations + m.Other
	return m
}

// gathered is the memory of weights gathered whole for compute. ZeRO-3
// and FSDP hold the layer in use and the one prefetched; FSDP2 as
// gpuflow's trainer runs it also holds the root module at stage 3, and
// every weight from the forward to the backward below it; without FSDP2
// on one GPU alone, every weight's bf16 copy is held throughout.
func (j *job) gathered(r pipelineRank) float64 {
	t := float64(j.l.TP)
	layer := j.counts.PerLayer / t * j.fw.ParamCommBytes
	stage := j.l.ShardingStage()
	switch {
	case j.alone():
		return (r.params + r.adapters) * j.fw.ParamCommBytes
	case j.fw.FSDP2 && stage == 3:
		root := r.params - j.counts.PerLayer*r.layers/t
		return root*j.fw.ParamCommBytes + 2*layer
	case j.fw.FSDP2:
		return (r.params + r.adapters) * j.fw.ParamCommBytes
	case stage == 3 && j.dataShards() > 1:
		return 2 * layer
	}
	return 0
}

// budget turns the stage's token or step budget into duration, cost and
// energy.
func (j *job) budget(e *Estimate) {
	tokensPerStep := float64(j.l.GlobalBatch) * float64(j.in.Model.SeqLen)
	switch {
	case j.in.TrainTokens > 0:
		e.Steps = int64(math.Ceil(j.in.TrainTokens / tokensPerStep))
	case j.in.TrainSteps > 0:
		e.Steps = j.in.TrainSteps
	}
	e.DurationS = float64(e.Steps)*e.StepTimeS + j.validationTime(e)
	gpus := float64(j.l.WorldSize())
	e.CostUSD = gpus * e.DurationS / 3600 * j.in.Hardware.CostPerGPUHour
	e.EnergyKWh = j.power(e) * e.DurationS / 3.6e6
	e.Goodput = nil
	j.goodput(e)
}

// power is the stage's mean draw in watts: each GPU at its TDP for the
// share of the step it works (the step less the pipeline bubble and the
// host wait) and each node's overhead throughout.
func (j *job) power(e *Estimate) float64 {
	hw := j.in.Hardware
	gpus := j.l.WorldSize()
	nodes := (gpus + hw.GPU.PerNode - 1) / hw.GPU.PerNode
	busy := 1.0
	if e.StepTimeS > 0 {
		idle := e.HostWaitS + e.BubbleFraction*e.ComputeS
		busy = max(0, 1-idle/e.StepTimeS)
	}
	return float64(gpus)*hw.GPU.TDPWatts*busy + float64(nodes)*hw.NodeOverheadWatts
}

// applyRuns replaces predictions by a measured run of this very
// configuration, when the calibration holds one.
func (j *job) applyRuns(e *Estimate) {
	r, ok := j.in.Calibration.Run(calibration.RunKey(j.fw.Name, j.in.LoRA.Key(), j.in.Model, j.l))
	if !ok {
		return
	}
	if r.TokensPerS > 0 {
		tokensPerStep := float64(j.l.GlobalBatch) * float64(j.in.Model.SeqLen)
		scale := e.TokensPerS / r.TokensPerS
		e.TokensPerS = r.TokensPerS
		e.TokensPerSPerGPU = r.TokensPerS / float64(j.l.WorldSize())
		e.StepTimeS = tokensPerStep / r.TokensPerS
		e.MFU /= scale
		e.ModelTFLOPSPerGPU /= scale
		e.HardwareTFLOPSPerGPU /= scale
		j.calibrate["tokens_per_s"] = true
		j.calibrate["step_time_s"] = true
		j.budget(e)
	}
	if r.PeakMemoryBytes > 0 {
		e.Memory.Total = r.PeakMemoryBytes
		j.calibrate["memory_bytes.total"] = true
	}
}

func (j *job) calibratedList() []string {
	names := make([]string, 0, len(j.calibrate)+len(j.links.calibrated))
	for k := range j.calibrate {
		names = append(names, k)
	}
	for k := range j.links.calibrated {
		names = append(names, "busbw."+k)
	}
	sort.Strings(names)
	return names
}

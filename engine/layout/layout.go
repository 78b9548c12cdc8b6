package layout

// Layout is a resolved parallelism layout. Rank order follows Megatron-LM:
// TP varies fastest, then CP, then DP, then PP.
type Layout struct {
	TP int `json:"tp"`
	PP int `json:"pp"`
	DP int `json:"dp"`
	CP int `json:"cp"`
	// VP is the number of virtual pipeline stages per rank (interleaved
	// 1F1B); 1 means plain 1F1B.
	VP int `json:"vp"`
	// ZeRO is the ZeRO stage 0..3; FSDP means full sharding in PyTorch's
	// FSDP2 and counts as stage 3 for memory.
	ZeRO             int    `json:"zero"`
	FSDP             bool   `json:"fsdp"`
	MicroBatch       int    `json:"micro_batch"`
	GlobalBatch      int    `json:"global_batch"`
	Recompute        string `json:"recompute"` // RecomputeNone, RecomputeSelective, RecomputeFull
	SequenceParallel bool   `json:"sequence_parallel"`
	Precision        string `json:"precision"` // "bf16" or "fp8"
}

// Recompute choices.
const (
	RecomputeNone      = "none"
	RecomputeSelective = "selective"
	RecomputeFull      = "full"
)

// WorldSize is the number of GPUs the layout occupies.
func (l Layout) WorldSize() int { return l.TP * l.PP * l.DP * l.CP }

// GradAccumulation is the number of micro-batches each DP rank runs per
// optimizer step.
func (l Layout) GradAccumulation() int {
	d := l.MicroBatch * l.DP
	if d == 0 {
		return 0
	}
	return l.GlobalBatch / d
}

// ShardingStage is the effective ZeRO stage, FSDP counting as 3.
func (l Layout) ShardingStage() int {
	if l.FSDP {
		return 3
	}
	return l.ZeRO
}

package api

// Layout is a parallelism layout as the engine resolves a stage's layout
// meta-argument: checked against the model and hardware, or chosen by a
// search. Rank order follows Megatron-LM: TP varies fastest, then CP, then
// DP, then PP. The engine hands it to plugins as the layout's value, with
// these field names, which sdk.Decode reads by the cty tags.
type Layout struct {
	TP int `json:"tp" cty:"tp"`
	PP int `json:"pp" cty:"pp"`
	DP int `json:"dp" cty:"dp"`
	CP int `json:"cp" cty:"cp"`
	// VP is the number of virtual pipeline stages per rank (interleaved
	// 1F1B); 1 means plain 1F1B.
	VP int `json:"vp" cty:"vp"`
	// ZeRO is the ZeRO stage 0..3; FSDP means full sharding in PyTorch's
	// FSDP2 and counts as stage 3 for memory.
	ZeRO             int    `json:"zero" cty:"zero"`
	FSDP             bool   `json:"fsdp" cty:"fsdp"`
	MicroBatch       int    `json:"micro_batch" cty:"micro_batch"`
	GlobalBatch      int    `json:"global_batch" cty:"global_batch"`
	Recompute        string `json:"recompute" cty:"recompute"` // "none", "selective" or "full"
	SequenceParallel bool   `json:"sequence_parallel" cty:"sequence_parallel"`
	Precision        string `json:"precision" cty:"precision"` // "bf16", "fp16" or "fp8"
	// Framework options; empty (nil) means the framework's default.
	// Attention is "flash" or "materialized".
	Attention string `json:"attention,omitempty" cty:"attention"`
	// ScatterGather splits each pipeline send over the TP ranks and
	// gathers it again over NVLink on arrival (Megatron-LM), with or
	// without sequence parallelism.
	ScatterGather *bool `json:"scatter_gather,omitempty" cty:"scatter_gather"`
	// GradReduceDType is the element type of the data-parallel gradient
	// reduction: "fp32", "bf16" or "fp16".
	GradReduceDType string `json:"grad_reduce_dtype,omitempty" cty:"grad_reduce_dtype"`
	// OverlapGradReduce overlaps the gradient reduction with the backward
	// pass (and the weight gathers with the forward).
	OverlapGradReduce *bool `json:"overlap_grad_reduce,omitempty" cty:"overlap_grad_reduce"`
	// GradAccumFusion adds each micro-batch's weight gradient into the
	// accumulated one inside the weight-gradient product (Megatron-LM's
	// gradient accumulation fusion) instead of in a separate pass.
	GradAccumFusion *bool `json:"grad_accumulation_fusion,omitempty" cty:"grad_accumulation_fusion"`
	// AsyncTPAllReduce runs the tensor-parallel all-reduce (reduce-scatter
	// under sequence parallelism) of a column-parallel layer's input
	// gradient behind the same layer's weight-gradient product
	// (Megatron-LM's async tensor-model-parallel all-reduce).
	AsyncTPAllReduce *bool `json:"async_tp_allreduce,omitempty" cty:"async_tp_allreduce"`
	// ScatterGatherGrads splits the backward's pipeline sends (activation
	// gradients) over the TP ranks as ScatterGather does the forward's;
	// DeepSpeed's pipeline engine sent them whole before v0.5.4 (October
	// 2021).
	ScatterGatherGrads *bool `json:"scatter_gather_grads,omitempty" cty:"scatter_gather_grads"`
	// FirstStageLayers and LastStageLayers put that many transformer
	// layers on the first and the last pipeline stage (Megatron-LM's
	// --decoder-first-pipeline-num-layers and
	// --decoder-last-pipeline-num-layers), the other stages splitting the
	// rest evenly; zero leaves a stage to the even split.
	FirstStageLayers int `json:"first_stage_layers,omitempty" cty:"first_stage_layers"`
	LastStageLayers  int `json:"last_stage_layers,omitempty" cty:"last_stage_layers"`
}

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

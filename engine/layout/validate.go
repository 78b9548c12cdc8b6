package layout

import (
	"fmt"

	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// Severities of a Finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Finding is one rule a layout breaks or strains. Field names the layout
// attribute (as spelled in HCL: "tp", "global_batch", ...) whose value
// should change, so a caller can point at its source range.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Field    string `json:"field"`
	Message  string `json:"message"`
}

// Errors reports whether any finding is an error.
func Errors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Validate checks a layout against the model it trains and the hardware it
// runs on; gpus is the number of GPUs the stage uses (0 means all of hw).
// A nil result means the layout is sound. Rules that need a positive degree
// are skipped while a degree is not positive, so each problem is reported
// once.
func Validate(l Layout, s model.Shape, hw *hardware.Profile, gpus int) []Finding {
	fs := CheckOwn(l)
	if Errors(fs) {
		return fs
	}
	return append(fs, CheckFit(l, s, hw, gpus)...)
}

// CheckOwn checks the rules a layout must pass whatever it trains and runs
// on (positive degrees, known choices), so a layout no stage uses is
// checked too.
func CheckOwn(l Layout) []Finding {
	return append(checkDegrees(l), checkChoices(l)...)
}

// CheckFit checks the rules that need the model and hardware, for a
// layout that passes CheckOwn.
func CheckFit(l Layout, s model.Shape, hw *hardware.Profile, gpus int) []Finding {
	var fs []Finding
	fs = append(fs, checkWorld(l, hw, gpus)...)
	fs = append(fs, checkDivisibility(l, s)...)
	fs = append(fs, checkTPDomain(l, hw)...)
	if l.Precision == hardware.PrecisionFP8 && hw != nil && !hw.GPU.Supports(hardware.PrecisionFP8) {
		fs = append(fs, errorf("fp8-supported", "precision",
			"%s has no FP8 tensor cores; set precision = \"bf16\".", gpuName(hw)))
	}
	return fs
}

func errorf(rule, field, format string, args ...any) Finding {
	return Finding{Rule: rule, Severity: SeverityError, Field: field, Message: fmt.Sprintf(format, args...)}
}

func warnf(rule, field, format string, args ...any) Finding {
	return Finding{Rule: rule, Severity: SeverityWarning, Field: field, Message: fmt.Sprintf(format, args...)}
}

func checkDegrees(l Layout) []Finding {
	var fs []Finding
	for _, d := range []struct {
		field string
		v     int
	}{{"tp", l.TP}, {"pp", l.PP}, {"dp", l.DP}, {"cp", l.CP}, {"micro_batch", l.MicroBatch}, {"global_batch", l.GlobalBatch}} {
		if d.v < 1 {
			fs = append(fs, errorf("positive-degree", d.field, "%s is %d; parallel degrees and batch sizes must be 1 or more.", d.field, d.v))
		}
	}
	if l.VP < 0 {
		fs = append(fs, errorf("positive-degree", "vp", "vp is %d; set it to 1 (plain 1F1B) or more.", l.VP))
	}
	for _, d := range []struct {
		field string
		v     int
	}{{"first_stage_layers", l.FirstStageLayers}, {"last_stage_layers", l.LastStageLayers}} {
		if d.v < 0 {
			fs = append(fs, errorf("positive-degree", d.field, "%s is %d; set it to 1 or more, or leave it out to split the layers evenly.", d.field, d.v))
		}
	}
	return fs
}

func checkChoices(l Layout) []Finding {
	var fs []Finding
	if l.ZeRO < 0 || l.ZeRO > 3 {
		fs = append(fs, errorf("zero-range", "zero", "zero is %d; ZeRO stages are 0, 1, 2 and 3.", l.ZeRO))
	}
	if l.FSDP && l.ZeRO != 0 {
		fs = append(fs, errorf("zero-fsdp-exclusive", "fsdp",
			"fsdp already shards everything (like ZeRO-3); remove zero = %d or set fsdp = false.", l.ZeRO))
	}
	switch l.Recompute {
	case "", RecomputeNone, RecomputeSelective, RecomputeFull:
	default:
		fs = append(fs, errorf("recompute-known", "recompute",
			"recompute is %q; use \"none\", \"selective\" or \"full\".", l.Recompute))
	}
	switch l.Precision {
	case "", hardware.PrecisionBF16, hardware.PrecisionFP16, hardware.PrecisionFP8:
	default:
		fs = append(fs, errorf("precision-known", "precision",
			"precision is %q; training supports \"bf16\", \"fp16\" (with loss scaling) and \"fp8\".", l.Precision))
	}
	switch l.Attention {
	case "", AttentionFlash, AttentionMaterialized:
	default:
		fs = append(fs, errorf("attention-known", "attention",
			"attention is %q; use %q (fused, scores never stored) or %q (scores computed and stored per layer).", l.Attention, AttentionFlash, AttentionMaterialized))
	}
	switch l.GradReduceDType {
	case "", "fp32", hardware.PrecisionBF16, hardware.PrecisionFP16:
	default:
		fs = append(fs, errorf("grad-reduce-dtype-known", "grad_reduce_dtype",
			"grad_reduce_dtype is %q; use \"fp32\", \"bf16\" or \"fp16\".", l.GradReduceDType))
	}
	if Uneven(l) && l.PP == 1 {
		field := "first_stage_layers"
		if l.FirstStageLayers == 0 {
			field = "last_stage_layers"
		}
		fs = append(fs, errorf("stage-layers-require-pp", field,
			"%s places layers on a pipeline stage but pp = 1; set pp above 1 or remove it.", field))
	}
	if VirtualStages(l) > 1 && l.PP == 1 {
		fs = append(fs, errorf("vp-requires-pp", "vp",
			"vp = %d interleaves pipeline stages but pp = 1; set vp = 1 or pp above 1.", l.VP))
	}
	if l.SequenceParallel && l.TP == 1 {
		fs = append(fs, warnf("sp-requires-tp", "sequence_parallel",
			"sequence_parallel splits activations over the TP group, which has one member; set tp above 1 or sequence_parallel = false."))
	}
	return fs
}

// VirtualStages is the layout's VP with an unset (zero) value read as 1.
func VirtualStages(l Layout) int { return max(l.VP, 1) }

func checkWorld(l Layout, hw *hardware.Profile, gpus int) []Finding {
	var fs []Finding
	have := 0
	if hw != nil {
		have = hw.TotalGPUs()
	}
	if gpus <= 0 {
		gpus = have
	}
	if ws := l.WorldSize(); ws != gpus {
		fs = append(fs, errorf("world-size", "dp",
			"tp*pp*dp*cp = %d*%d*%d*%d = %d but the stage uses %d GPUs; change dp (or tp, pp, cp) so the product is %d.",
			l.TP, l.PP, l.DP, l.CP, ws, gpus, gpus))
	}
	if gpus > have {
		fs = append(fs, errorf("world-size", "dp",
			"the stage uses %d GPUs but the hardware has %d; add nodes or shrink the layout.", gpus, have))
	}
	return fs
}

func checkDivisibility(l Layout, s model.Shape) []Finding {
	var fs []Finding
	if s.Heads%l.TP != 0 {
		fs = append(fs, errorf("heads-divisible", "tp",
			"%d attention heads do not split evenly over tp = %d; pick a tp that divides %d.", s.Heads, l.TP, s.Heads))
	}
	if s.KVHeads%l.TP != 0 {
		fs = append(fs, errorf("kv-heads-divisible", "tp",
			"%d key/value heads do not split evenly over tp = %d; pick a tp that divides %d.", s.KVHeads, l.TP, s.KVHeads))
	}
	if msg, field := checkStageLayers(l, s.Layers); msg != "" {
		fs = append(fs, errorf("layers-divisible", field, "%s", msg))
	}
	if per := l.MicroBatch * l.DP; l.GlobalBatch%per != 0 {
		fs = append(fs, errorf("global-batch-divisible", "global_batch",
			"global_batch = %d is not a multiple of micro_batch*dp = %d*%d = %d; set it to a multiple of %d.",
			l.GlobalBatch, l.MicroBatch, l.DP, per, per))
	}
	if s.SeqLen%l.CP != 0 {
		fs = append(fs, errorf("seq-divisible-cp", "cp",
			"seq_len = %d does not split evenly over cp = %d; pick a cp that divides %d.", s.SeqLen, l.CP, s.SeqLen))
	}
	if l.SequenceParallel && l.TP > 1 && s.SeqLen%(l.CP*l.TP) != 0 {
		fs = append(fs, errorf("seq-divisible-sp", "tp",
			"sequence_parallel splits each of the %d-token CP chunks over tp = %d, which does not divide it; pick a tp that does.",
			s.SeqLen/l.CP, l.TP))
	}
	return fs
}

// checkTPDomain keeps tensor parallelism on NVLink: its collectives run
// twice per layer in forward and backward, too often for a network hop.
func checkTPDomain(l Layout, hw *hardware.Profile) []Finding {
	if hw == nil || l.TP == 1 || hw.GPU.PerNode < 1 {
		return nil
	}
	world := l.TP * max(1, min(l.WorldSize(), hw.TotalGPUs())/l.TP)
	g := summarise(kind{KindTP, l.TP, 1}, world, hw)
	switch {
	case l.TP > hw.TotalGPUs():
		return []Finding{errorf("tp-in-domain", "tp", "tp = %d is larger than the %d GPUs of the hardware; lower tp.", l.TP, hw.TotalGPUs())}
	case g.Link == LinkNetwork:
		return []Finding{errorf("tp-in-domain", "tp",
			"tp = %d puts tensor-parallel groups across the network (%d GPUs per node, NVLink domain of %d); use a tp that divides %d.",
			l.TP, hw.GPU.PerNode, hw.Interconnect.DomainSize, tpLimit(hw))}
	case g.Link == LinkPCIe:
		return []Finding{warnf("tp-in-domain", "tp",
			"tp = %d groups talk over PCIe, outside an NVLink domain; lower tp to fit one NVLink domain or accept slow tensor parallelism.", l.TP)}
	}
	return nil
}

// tpLimit is the largest group that stays inside one NVLink domain (or one
// node when there is no NVLink).
func tpLimit(hw *hardware.Profile) int {
	if hw.Interconnect.DomainSize >= 2 {
		return hw.Interconnect.DomainSize
	}
	return hw.GPU.PerNode
}

func gpuName(hw *hardware.Profile) string {
	if hw.GPU.Model != "" {
		return hw.GPU.Model
	}
	return "this GPU"
}

package hardware

import (
	"github.com/zclconf/go-cty/cty"
)

// ValueType is the type of Profile.Value: what a workload's reference
// hardware.NAME evaluates to. Use it to type an unknown placeholder.
func ValueType() cty.Type {
	return cty.Object(map[string]cty.Type{
		"name":               cty.String,
		"nodes":              cty.Number,
		"gpus_per_node":      cty.Number,
		"total_gpus":         cty.Number,
		"gpu_model":          cty.String,
		"gpu_memory_bytes":   cty.Number,
		"tflops":             cty.Map(cty.Number),
		"hbm_bytes_per_s":    cty.Number,
		"interconnect_kind":  cty.String,
		"nvlink_domain_size": cty.Number,
		"nvlink_multicast":   cty.Bool,
		"network_kind":       cty.String,
		"cost_per_gpu_hour":  cty.Number,
	})
}

// Value is the object a workload sees for hardware.NAME. tflops holds the
// precisions the GPU is rated for, dense TFLOP/s per GPU.
func (p *Profile) Value() cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"name":               cty.StringVal(p.Name),
		"nodes":              cty.NumberIntVal(int64(p.Nodes)),
		"gpus_per_node":      cty.NumberIntVal(int64(p.GPU.PerNode)),
		"total_gpus":         cty.NumberIntVal(int64(p.TotalGPUs())),
		"gpu_model":          cty.StringVal(p.GPU.Model),
		"gpu_memory_bytes":   cty.NumberIntVal(p.GPU.MemoryBytes),
		"tflops":             p.tflopsValue(),
		"hbm_bytes_per_s":    cty.NumberFloatVal(p.GPU.HBMBytesPerS),
		"interconnect_kind":  cty.StringVal(p.Interconnect.Kind),
		"nvlink_domain_size": cty.NumberIntVal(int64(p.Interconnect.DomainSize)),
		"nvlink_multicast":   cty.BoolVal(!p.Interconnect.MulticastOff),
		"network_kind":       cty.StringVal(p.Network.Kind),
		"cost_per_gpu_hour":  cty.NumberFloatVal(p.CostPerGPUHour),
	})
}

func (p *Profile) tflopsValue() cty.Value {
	ratings := map[string]cty.Value{}
	for precision, tflops := range p.GPU.TFLOPS {
		if tflops > 0 {
			ratings[precision] = cty.NumberFloatVal(tflops)
		}
	}
	if len(ratings) == 0 {
		return cty.MapValEmpty(cty.Number)
	}
	return cty.MapVal(ratings)
}

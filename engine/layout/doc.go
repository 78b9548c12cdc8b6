// Package layout describes how a training job is split over GPUs: tensor,
// pipeline, data and context parallel degrees, ZeRO/FSDP sharding, batch
// sizes, recomputation and precision. It places a layout's ranks on a
// hardware profile and reports which link each parallel group crosses
// (Place), and checks a layout against the model and hardware (Validate).
package layout

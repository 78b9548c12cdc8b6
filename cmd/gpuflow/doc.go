// Command gpuflow is a declarative pipeline engine for GPU work: it plans
// and applies workloads of hardware, models, layouts and stages written in
// HCL. Each verb lives in its own file; flags are parsed into a typed struct
// first, then a view (human or JSON) renders the result.
package main

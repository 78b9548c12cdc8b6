// Package dsl reads gpuflow workloads: HCL files that declare variables,
// locals, outputs, hardware, models, layouts, datasets and stages.
//
// Loading runs in phases, as Packer does: parse every file, check the
// top-level schema, evaluate variables (defaults, environment, var files and
// -var flags, in that order of precedence, then their validation rules), then
// locals in dependency order. Hardware, model, layout and dataset blocks are
// decoded into typed but unresolved values; a stage keeps its body, because
// the plugin that owns the stage type supplies the schema it is decoded with.
//
// What the blocks mean together (placement, layout rules, the DAG) is the
// engine's business; this package only says what the files say, with every
// problem reported as an hcl.Diagnostic that carries its source range.
package dsl

// Package train is the plugin behind the pretrain and finetune stage types:
// their body schema, validation and plan details. The trainer that runs
// them on GPUs through torchrun lands with issue #8; until then applying
// such a stage fails with a diagnostic that says so.
package train

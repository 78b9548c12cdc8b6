// Package train is the plugin behind the pretrain, finetune and eval stage
// types: their body schema, validation and plan details, and applying them
// with gpuflow's own trainer (trainer/*.py, embedded and written into each
// run's folder) under torchrun, PyTorch's distributed launcher. An eval
// stage runs trainer/evaluate.py; gpuflow tokenizes its questions and
// prompts before the launch (with plugins/dataprep/bpe, data prep's own
// tokenizer) and scores, decodes and checks thresholds after it (eval*.go).
//
// Applying a stage prepares a Launch (decode the body, find the shards and
// the checkpoint to resume from, write the trainer and its config.json),
// runs the trainer's pre-flight check with the same Python, starts torchrun
// in its own process group with the plan's NCCL environment, and turns the
// trainer's JSON lines into progress, metric, log and artifact events. Stop
// sends the group SIGTERM (the trainer checkpoints and exits) and SIGKILL
// after a grace period. Prepare and Torchrun are exported so that a cluster
// executor can render the same launch for several nodes.
//
// It does not schedule nodes (a cluster executor does), estimate memory or
// time (engine/estimate does), or prepare data (plugins/dataprep does).
// docs/training.md describes the trainer, its outputs and its limits.
package train

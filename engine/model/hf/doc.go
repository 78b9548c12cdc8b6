// Package hf reads a Hugging Face model folder the way plan needs it:
// config.json for the architecture and shape, and the safetensors headers
// (JSON at the front of each file) to check that the weights match it.
// It never reads the weights themselves; loading them is the trainer's job
// (plugins/train/trainer/models).
package hf

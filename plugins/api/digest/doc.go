// Package digest is the SHA-256 of a file's contents, which both the
// engine (the files a stage reads, in its input hash) and the plugins (a
// tokenizer's or chat template's identity in a data manifest) take, so
// that both take it one way. It depends on nothing else in gpuflow, so
// that both sides may import it.
package digest

// Package input reads the raw text of a data_prep stage: it expands the
// configured files, globs and Hugging Face dataset folders, streams records
// out of them in a fixed order (a JSONL line, a whole plain-text file, or a
// row of a Parquet or Arrow IPC column) with their place (file and line, or
// file, row group and row), and decodes a record into the text to
// tokenize: a JSON field, a JSON record rendered through a Go text/template
// (chat and function-calling samples), or the text itself.
//
// Reading is split from decoding so that decoding, the costly part, can run
// on many goroutines while records keep their input order. A record that
// cannot be read or decoded is a *RecordError naming its place and the
// reason; whether to stop or skip is the caller's choice.
//
// It does not tokenize, split or shuffle: see plugins/dataprep/pipeline.
package input

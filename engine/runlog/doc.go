// Package runlog keeps what one run of one stage leaves on disk under
// .gpuflow/runs/STAGE/RUN-ID/: every event the stage reported as a JSON line
// in events.jsonl, and its log lines as plain text in log.
//
// It also defines the JSON shape of a stage event, shared by events.jsonl
// and apply -json. It does not decide what runs; the engine does.
package runlog

// Package ncclenv derives the NCCL environment for a hardware profile:
// which variables to set, to what, and a one-line reason each, from the
// profile's NVLink domain and network. A workload may override any of
// them, except the few that protect shared machines.
//
// It does not launch anything or read the machine it runs on; the plan
// shows the settings and apply passes them to each stage's processes.
package ncclenv

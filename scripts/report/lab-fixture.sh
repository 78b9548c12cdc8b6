#!/usr/bin/env bash
# Refreshes the report's fixtures (engine/report/testdata/lab-h200) from a
# real apply of workloads/h200-lab.hcl: the lab-runs.tgz archive that
# scripts/device/lab-valid.sh writes, and the repository root the run
# had there (it prints it on its first line, "root PATH").
#
#   scripts/report/lab-fixture.sh lab-runs.tgz ROOT
#
# The fixtures keep state and each run's log, inputs, events and the
# trainer's config; they leave out the trainer's stdout and stderr, the
# TensorBoard files, the benchmark's raw results and the calibration,
# drop progress events (the report reads metrics, logs and artifacts),
# and make every path relative to the repository root. Then run
# `go test ./engine/report -update` for the goldens.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 2 ] || { echo "usage: $0 lab-runs.tgz ROOT" >&2; exit 2; }
archive=$1 root=${2%/}
dest=engine/report/testdata/lab-h200
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xzf "$archive" -C "$tmp"
g=$tmp/.gpuflow
[ -f "$g/state/workloads_h200-lab.json" ] || { echo "$archive holds no lab state" >&2; exit 1; }
rm -rf "$g/calibration.json" "$g"/state/*.lock "$g"/runs/*/*/tensorboard
rm -f "$g"/runs/*/*/stdout.log "$g"/runs/*/*/stderr.log "$g"/runs/*/*/benchmark.json "$g"/runs/*/*/benchmark.txt
for f in "$g"/runs/*/*/events.jsonl; do
  grep -v '"type":"progress"' "$f" >"$f.kept" || true
  mv "$f.kept" "$f"
done
grep -rlF "$root/" "$g" | while read -r f; do sed -i "s|$root/||g" "$f"; done
if grep -rqF "$root" "$g"; then
  echo "paths under $root remain:" >&2
  grep -rlF "$root" "$g" >&2
  exit 1
fi
rm -rf "$dest/.gpuflow"
cp -r "$g" "$dest/.gpuflow"
echo "fixtures in $dest/.gpuflow from $archive"

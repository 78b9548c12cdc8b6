#!/bin/bash
# One-GPU speed of gpuflow's trainer (kind nvidia-h200), one call: each run
# of scripts/device/speed.hcl is planned (plan.json) before it is applied,
# and speed_summary.py sets the plan beside what the run measured.
#
# Here, from the repository root, a binary for each trainer to compare, and
# the scripts it reads (the GPU machine gets them in .device/speed):
#   mkdir -p .device/speed && CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o .device/speed/gpuflow ./cmd/gpuflow && gzip -f .device/speed/gpuflow
#   cp -r plugins/train/trainer scripts/device/{speed.sh,speed.hcl,speed_summary.py,trace_kernels.py,train_hf_baseline.py,levers.py} .device/speed/
# There, with .device/speed carried:
#   RUNS=runs.txt timeout -k 15 290 bash .device/speed/speed.sh
# RUNS names a file of runs, one a line: NAME BINARY ENV... -- VARS...
# (BINARY a gzipped gpuflow under .device/speed; ENV like
# GPUFLOW_TRAIN_PROFILE=3, DATA=markov or DATA=text for learnable tokens
# instead of random ones; VARS like layers=20 precision=fp8); a line
# "hf MICRO_BATCH" runs the transformers + torch.compile baseline, "pytest"
# the trainer's tests, "py SCRIPT" runs python3 .device/speed/SCRIPT TRAINER
# (the isolated kernel timings, levers.py).
# A profiled run (GPUFLOW_TRAIN_PROFILE=N, PROFILE_STEPS=N) prints
# trace_kernels.py's table of its GPU time. Results: $OUT/summary.md,
# $OUT/run.log, $OUT/logs.tgz (plans, apply logs, events, profile tables).
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../.."
REPO=$(pwd)
HERE=$REPO/scripts/device
DEV=${DEV:-$REPO/.device/speed}
OUT=${OUT:-/tmp/speed-out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
# timeout signals the whole process group: tee ignores it, so what the
# EXIT trap prints still reaches the log.
exec > >(trap '' TERM INT; exec tee "$OUT/run.log") 2>&1
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }

# The summary is rewritten after every run, so a call cut short by its
# time limit still brings back the runs it finished.
summarize() { python3 "$DEV/speed_summary.py" "$WORK" --md "$OUT/summary.md"; }
finish() {
	say "summary"
	summarize
	cat "$OUT/summary.md"
	tar czf "$OUT/logs.tgz" --exclude='*.bin' --exclude='*.idx' --exclude=checkpoints --exclude='gpuflow*' -C "$WORK" . 2>/dev/null
	say "done"
}
trap finish EXIT
trap 'say "stopped by a signal"; exit 1' TERM INT

say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)')"
python3 "$HERE/train_correctness.py" shard "$WORK/random" --vocab 128256 --tokens 3000000 --random
# The learnable streams are made only for a runs file that names them.
if grep -q 'DATA=markov' "$DEV/$RUNS"; then
	python3 "$HERE/train_correctness.py" shard "$WORK/markov" --vocab 32000 --tokens 3000000
fi
if grep -q 'DATA=text' "$DEV/$RUNS"; then
	python3 "$HERE/train_correctness.py" shard "$WORK/text" --vocab 256 --tokens 4000000 --text "$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')"
fi

while read -r line; do
	[ -z "$line" ] && continue
	set -- $line
	name=$1
	shift
	case $name in
	hf)
		say "hf compile micro-batch $1"
		mkdir -p "$WORK/hf$1"
		timeout -k 10 150 python3 "$DEV/train_hf_baseline.py" --compile --micro-batch "$1" > "$WORK/hf$1/result.json" 2> "$WORK/hf$1/stderr.log"
		say "hf exit $?: $(cat "$WORK/hf$1/result.json")"
		summarize
		continue ;;
	pytest)
		say "trainer tests"
		(cd "$DEV/trainer" && timeout -k 10 200 python3 -m pytest -q -p no:cacheprovider tests) > "$WORK/pytest.log" 2>&1 &
		wait $!
		say "pytest exit $?: $(tail -n 3 "$WORK/pytest.log")"
		continue ;;
	py)
		say "python3 $1"
		timeout -k 10 240 python3 "$DEV/$1" "$DEV/trainer" 2>&1 | grep -v Warning
		say "$1 exit ${PIPESTATUS[0]}"
		continue ;;
	esac
	bin=$1
	shift
	envs=()
	# @DEV@ in a variable stands for the scripts' folder there.
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("${1//@DEV@/$DEV}"); shift; done
	shift
	vars=()
	for v in "$@"; do vars+=(-var "$v"); done
	dir=$WORK/$name
	mkdir -p "$dir"
	[ -x "$WORK/$bin" ] || { gunzip -c "$DEV/$bin.gz" > "$WORK/$bin" && chmod +x "$WORK/$bin"; }
	data=$WORK/random
	case " ${envs[*]} " in *" DATA=markov "*) data=$WORK/markov ;; *" DATA=text "*) data=$WORK/text ;; esac
	(
		cd "$dir" || exit
		"$WORK/$bin" plan -json -no-color -var "data=$data" "${vars[@]}" "$DEV/speed.hcl" > plan.json 2> plan.err
		env GPUFLOW_TRAIN_CHECKPOINT=0 "${envs[@]}" timeout -k 15 200 "$WORK/$bin" apply -auto-approve -no-color -var "data=$data" "${vars[@]}" "$DEV/speed.hcl" > apply.log 2>&1
		rc=$?
		echo "$bin ${envs[*]} $*" > what.txt
		say "$name apply exit $rc"
	) &
	# Waited for in the background: bash defers a trap while a foreground
	# child runs, so a run cut by the call's time limit would otherwise
	# take the EXIT trap (the table and logs.tgz) down with it.
	wait $!
	for p in "$dir"/.gpuflow/runs/*/*/profile-rank0.trace.json.gz; do
		[ -f "$p" ] || continue
		head -n 1 "${p%.trace.json.gz}.txt"
		python3 "$DEV/trace_kernels.py" "$p" "${PROFILE_STEPS:-3}" | tee "$dir/kernels.txt"
		rm -f "$p"
	done
	summarize
done < "$DEV/$RUNS"

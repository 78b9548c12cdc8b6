#!/bin/bash
# The trainer's own tests (plugins/train/trainer/tests) on a GPU machine:
# data, schedule, model, recomputation, LoRA and merge, fp8 and fp16,
# windows and the key-value cache, pre-flight, CPU-rank runs over gloo and
# one-GPU runs through torchrun (checkpoint, resume, LoRA on the
# checkpoint).
#
#   bash scripts/device/train-tests.sh
#   JOBS=4 LOGS=DIR bash scripts/device/train-tests.sh
#
# JOBS=N (pytest) runs the test classes in N processes at once, each class
# whole in one process so its shared set-up runs once, and writes each
# process's log to LOGS/tests-K.log; the exit status is the first failing
# process's. The one GPU is shared by the processes: the tests are small.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../../plugins/train/trainer"
JOBS=${JOBS:-1}
if [ "$JOBS" -le 1 ]; then
	exec python3 -m unittest discover -s tests -v
fi
LOGS=$(mkdir -p "${LOGS:-/tmp/train-tests}" && cd "${LOGS:-/tmp/train-tests}" && pwd)
# Test ids are FILE::CLASS::TEST or FILE::TEST; a process takes whole
# classes (or files, for tests outside a class), round robin.
mapfile -t units < <(python3 -m pytest --collect-only -q -p no:cacheprovider tests | grep '::' | sed 's/::[^:]*$//' | sort -u)
pids=()
for ((k = 0; k < JOBS; k++)); do
	mine=()
	for ((i = k; i < ${#units[@]}; i += JOBS)); do mine+=("${units[i]}"); done
	[ ${#mine[@]} -eq 0 ] && continue
	python3 -m pytest -q -p no:cacheprovider "${mine[@]}" > "$LOGS/tests-$k.log" 2>&1 &
	pids+=($!)
done
status=0
for p in "${pids[@]}"; do
	wait "$p" || { rc=$?; [ $status -eq 0 ] && status=$rc; }
done
for f in "$LOGS"/tests-*.log; do echo "$f: $(tail -n 1 "$f")"; done
exit $status

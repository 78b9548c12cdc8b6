#!/bin/bash
# What the CPU-rank checks proved, on two GPUs over NCCL against one GPU,
# in one call on a machine with two GPUs:
#   train_correctness.py's gpus2 rows: 50 steps of fp8 under TP2 with
#     sequence parallelism (with and without LoRA), fp16 under TP2, PP2
#     and DP2 with FSDP2, tied embeddings and LoRA under TP2 and PP2, each
#     against its own model on one GPU;
#   eval_sharded.py: the evaluation with its weights sharded over both
#     GPUs (fsdp = true) against one GPU holding them whole, of a model
#     and of LoRA adapters over it (loss, choice scores, greedy tokens).
# The one-GPU runs take turns on GPU 0 and GPU 1 while the two-GPU runs go
# one after the other on both.
#
# Here, from the repository root (DIR holds what the machine needs):
#   DIR=.device/gpus2 && rm -rf $DIR && mkdir -p $DIR && cp -r plugins/train/trainer $DIR/ &&
#   cp scripts/device/gpus2-check.sh scripts/device/train_correctness.py scripts/device/eval_sharded.py $DIR/
# There, with DIR carried:
#   bash DIR/gpus2-check.sh DIR
# Results: $OUT/gpus2.md (the table) and $OUT/gpus2-logs.tgz (every run's
# config and logs, and run.log). BUDGET (seconds, default 470) bounds the
# runs: each is stopped at the budget's end, and one not started by then
# is left out and marked so. ONLY (comma-separated: train_correctness.py's
# model names, such as tied,lora, and eval for the evaluation) runs and
# compares those rows alone. DRY=1 checks the script's plumbing without
# torch (python3 with numpy): the shell and Python syntax, and every
# command it would run, printed instead of run.
set -uo pipefail
# NVLink SHARP (multicast) off for NCCL, PyTorch's symmetric memory and
# NVSHMEM: the GPUs' NVLink fabric here does not support it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(cd "${1:?usage: gpus2-check.sh DIR}" && pwd)
TRAINER=$DIR/trainer
DRY=${DRY:-0}
BUDGET=${BUDGET:-470}
ONLY=${ONLY:-}
OUT=${OUT:-/tmp/gpus2-check-out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
TC="$HERE/train_correctness.py"
EV="$HERE/eval_sharded.py"

if [ "$DRY" = 1 ]; then
	bash -n "$0" && python3 -m py_compile "$TC" "$EV" || exit 1
	[ -f "$TRAINER/train.py" ] && [ -f "$TRAINER/evaluate.py" ] && [ -f "$TRAINER/tests/test_evaluate.py" ] ||
		{ echo "no trainer (train.py, evaluate.py, tests) in $TRAINER"; exit 1; }
fi

# on_gpus GPUS CMD...: CMD on GPUS (CUDA_VISIBLE_DEVICES), printed under DRY=1.
on_gpus() {
	local gpus=$1
	shift
	if [ "$DRY" = 1 ]; then
		echo "CUDA_VISIBLE_DEVICES=$gpus $*"
	else
		CUDA_VISIBLE_DEVICES=$gpus "$@"
	fi
}

# left: the seconds a run started now may take (at most 120), 0 past the budget.
left() {
	local s=$((BUDGET - ($(date +%s) - T0)))
	[ $s -gt 120 ] && s=120
	[ $s -lt 10 ] && s=0
	echo $s
}

# job GPUS NAME: one run, a training row or an eval.NAME, stopped at the
# budget's end; not started past it.
job() {
	local gpus=$1 name=$2 t
	t=$(left)
	if [ "$t" = 0 ]; then
		say "$name: not started, past the budget of $BUDGET s"
		return
	fi
	case $name in
	eval.*) on_gpus "$gpus" python3 "$EV" run "${name#eval.}" "$WORK/eval" --trainer "$TRAINER" --timeout "$t" ;;
	*) on_gpus "$gpus" python3 "$TC" run "$name" "$WORK/train" --trainer "$TRAINER" --timeout "$t" ;;
	esac
	say "$name done"
}

# lane GPUS NAME...: the runs one after the other on GPUS.
lane() {
	local gpus=$1 name
	shift
	for name; do job "$gpus" "$name"; done
}

main() {
	say "data: the token stream, the evaluation's model, samples, questions, prompts and adapters"
	mkdir -p "$WORK/train"
	on_gpus "" python3 "$TC" shard "$WORK/train/markov" --vocab 2048 --tokens 300000 || return 1
	on_gpus "" python3 "$EV" make "$WORK/eval" --trainer "$TRAINER" || return 1
	local one=() two=() i=0 name evals=1 listed
	[ -n "$ONLY" ] && [[ ",$ONLY," != *",eval,"* ]] && evals=0
	# The lists are read whole first, so that a train_correctness.py that
	# cannot list its rows stops the check instead of leaving it none.
	listed=$(python3 "$TC" list gpus2 --gpus 1 --only "$ONLY") || return 1
	for name in $listed; do one+=("$name"); done
	listed=$(python3 "$TC" list gpus2 --gpus 2 --only "$ONLY") || return 1
	for name in $listed; do two+=("$name"); done
	if [ $evals = 1 ]; then
		one+=(eval.whole eval.lora-whole)
		two=(eval.sharded eval.lora-sharded "${two[@]}")
	fi
	local gpu0=() gpu1=()
	for name in "${one[@]}"; do
		if ((i++ % 2 == 0)); then gpu0+=("$name"); else gpu1+=("$name"); fi
	done
	say "1 GPU on GPU 0: ${gpu0[*]}; on GPU 1: ${gpu1[*]}; 2 GPUs, in turn: ${two[*]}"
	lane 0 "${gpu0[@]}" &
	local a=$!
	lane 1 "${gpu1[@]}" &
	local b=$!
	lane 0,1 "${two[@]}"
	wait $a $b
	say "compare"
	local ok=0
	: > "$WORK/eval.md"
	on_gpus "" python3 "$TC" compare "$WORK/train" --set gpus2 --only "$ONLY" --md "$WORK/train.md" || ok=1
	[ $evals = 1 ] && { on_gpus "" python3 "$EV" compare "$WORK/eval" --md "$WORK/eval.md" || ok=1; }
	[ "$DRY" = 1 ] && return 0
	{
		echo "Training: each row's losses at every one of 50 steps against its model's run on 1 GPU (bf16 layouts drift by rounding;"
		echo "tolerances in train_correctness.py). Evaluation: tolerances in eval_sharded.py."
		echo
		cat "$WORK/train.md"
		echo
		cat "$WORK/eval.md"
		echo
		echo "$(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs), $(($(date +%s) - T0)) s, all hold: $([ $ok = 0 ] && echo yes || echo NO)"
	} > "$OUT/gpus2.md"
	cat "$OUT/gpus2.md"
	return $ok
}

main 2>&1 | tee "$WORK/run.log"
rc=${PIPESTATUS[0]}
if [ "$DRY" = 1 ]; then
	rm -rf "$WORK"
else
	tar czf "$OUT/gpus2-logs.tgz" --exclude='*.bin' --exclude='*.idx' --exclude='*.safetensors' --exclude=ckpt -C "$WORK" .
fi
exit "$rc"

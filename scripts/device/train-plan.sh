#!/bin/bash
# The plan against reality for gpuflow's trainer, on a 4x H200
# machine (kind nvidia-h200-x4) in one call: every run below is planned
# (plan.json) before any of them starts, then applied, and
# train_plan_summary.py sets each prediction beside what the run measured.
#
#   A  1x H200, Llama-3.2-1B shape, micro-batch 4, compiled
#   B  the same, eager
#   C  4x H200, FSDP, the same work per GPU
#   D  workloads/h200-lab.hcl's pre-train (2x H200), and
#   E  its LoRA fine-tune, after acceptance and data prep
#   F  1x H200, 1B shape, micro-batch 8, full recompute
#   G  2x H200, 1B shape, FSDP, micro-batch 2, two per step
#   H  1x H200, the h200-lab model, micro-batch 8, four per step
#   I  2x H200, 1B shape, replicated (ZeRO 0), eager
#   J  2x H200, 1B shape untied, TP2 with sequence parallelism
#   K  2x H200, 1B shape untied, PP2 1F1B, micro-batch 2, four per step
#   L  1x H200, 1B shape, micro-batch 8, selective recompute
#   M  2x H200, 1B shape untied, PP2 x VP2 interleaved, as K
#
# and, to check the constants fitted to A-M on layouts they did not see
# (RUNS=N,O,P,Q,R,S):
#   N  1x H200, 1B shape, micro-batch 2, four per step
#   O  4x H200, 1B shape, FSDP, micro-batch 8, selective recompute
#   P  2x H200, 1B shape untied, TP2 + sequence parallel, micro-batch 8, full recompute
#   Q  4x H200, 1B shape untied, PP2 x DP2 (FSDP), micro-batch 2, four per step
#   R  1x H200, the h200-lab model, micro-batch 16, two per step
#   S  4x H200, 1B shape untied, TP2 x DP2 (FSDP), micro-batch 4
#
# and, against the accounting refined on N-S (RUNS=T,U,V,W,X):
#   T  4x H200, 1B shape untied, PP4 1F1B, micro-batch 1, eight per step
#   U  4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 4
#   V  2x H200, 1B shape, FSDP, micro-batch 4, two per step
#   W  1x H200, 1B shape, micro-batch 4, two per step, full recompute
#   X  4x H200, 1B shape untied, PP2 x TP2, micro-batch 2, four per step
#
# and, to take apart what T and U cost beyond the plan (RUNS=U2,U8,UE,T2,T4):
#   U2, U8  U at micro-batch 2 and 8; UE  U eager
#   T2, T4  T at micro-batch 2 and 4, four per step
#   UP      U with NCCL_PROTO=Simple (NCCL picked the LL protocol for U's
#           tensor-parallel all-gathers)
#   UH      U with TORCH_NCCL_HIGH_PRIORITY=1 (NCCL's streams ahead of the
#           products' when both have kernels ready)
#
# and, against the tensor-parallel host time and the coupling of host and
# GPU fitted to U, U2, U8, T and X (RUNS=Y,Z,U6,UF,J2,X4,K1,U):
#   Y   2x H200, h200-lab model untied, TP2 + sequence parallel, micro-batch 8, 4 per step
#   Z   4x H200, h200-lab model untied, TP4 + sequence parallel, micro-batch 16, 2 per step
#   U6  U at micro-batch 6;  UF  U with full recompute
#   J2  J at micro-batch 2
#   X4  X at micro-batch 4
#   K1  K at micro-batch 1, eight per step
#
# and against the refit over all of those (RUNS=Y16,Z8,JS,US,X1,XS,U):
#   Y16 Y at micro-batch 16, two per step;  Z8  Z at micro-batch 8, four per step
#   JS  J with selective recompute;  US  U with selective recompute
#   X1  X at micro-batch 1, eight per step;  XS  X4 with selective recompute
#
# and tied beside untied under tensor parallelism (RUNS=J,JT):
#   JT  J with the embeddings tied (the output layer's weight is the
#       input embedding's, split over the vocabulary on both sides)
#
# The GPUs are kept busy in parallel: GPUs 2,3 run D-E, G, I, M, P, V, J2;
# GPU 0 A, F, N, R, W; GPU 1 B, H, L; then GPUs 0,1 J, JT, K, Y, K1, Y16, JS;
# last all four the rest, one after another.
#
# Here, from the repository root:
#   mkdir -p .device/train && CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o .device/train/gpuflow ./cmd/gpuflow && gzip -f .device/train/gpuflow
# There, with .device/train carried:
#   timeout -k 15 580 bash scripts/device/train-plan.sh
# RUNS picks runs (default all, e.g. RUNS=A,F). Results: $OUT/plan-check.md,
# $OUT/run.log, $OUT/plan-logs.tgz (every plan.json, apply log and state);
# with GPUFLOW_TRAIN_PROFILE=N exported, $OUT/traces.tgz and each profiled
# run's trace_summary.py table in run.log.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../.."
REPO=$(pwd)
HERE=$REPO/scripts/device
OUT=${OUT:-/tmp/train-plan}
WORK=$(mktemp -d)
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
RUNS=${RUNS:-A,B,C,D,E,F,G,H,I,J,K,L,M}
ALL="A B C D E F G H I J K L M N O P Q R S T U V W X U2 U8 UE T2 T4 UP UH Y Z U6 UF J2 X4 K1 Y16 Z8 JS US X1 XS JT"
wanted() { [[ ",$RUNS," == *",$1,"* ]]; }

finished=0
finish() {
	[ $finished -eq 1 ] && return
	finished=1
	say "summary"
	python3 "$HERE/train_plan_summary.py" "$WORK" --md "$OUT/plan-check.md"
	for d in "$WORK"/run-*; do echo "-- $(basename "$d")"; tail -n 4 "$d/apply.log" 2>/dev/null; done
	# Profiled runs (GPUFLOW_TRAIN_PROFILE=N): each one's timeline across
	# ranks; the traces travel apart from the logs, being large.
	for d in "$WORK"/run-*; do
		compgen -G "$d/.gpuflow/runs/*/*/profile-rank*.trace.json.gz" > /dev/null || continue
		echo "-- $(basename "$d"): trace_summary.py"
		python3 "$HERE/trace_summary.py" "$d" | tee "$d/trace-summary.md"
	done
	(cd "$WORK" && find . -name 'profile-rank*.trace.json.gz' -print0 | tar czf "$OUT/traces.tgz" --null -T - 2>/dev/null)
	tar czf "$OUT/plan-logs.tgz" --exclude='*.trace.json.gz' --exclude='*.bin' --exclude='*.idx' --exclude='*.distcp' --exclude=checkpoints \
		--exclude=gpuflow --exclude='*.safetensors' --exclude=corpus --exclude=random --exclude=small -C "$WORK" . 2>/dev/null
	say "done"
}
trap finish EXIT
trap 'say "stopped by a signal"; exit 1' TERM INT

GF=$WORK/gpuflow
gunzip -c .device/train/gpuflow.gz > "$GF" && chmod +x "$GF" || { echo "no .device/train/gpuflow.gz"; exit 1; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l); $(python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())')"

python3 "$HERE/train_correctness.py" shard "$WORK/random" --vocab 128256 --tokens 2000000 --random
python3 "$HERE/train_correctness.py" shard "$WORK/small" --vocab 50304 --tokens 3000000 --random
# The lab pre-trains on the image's copyright files (lab_corpus.py).
python3 "$HERE/lab_corpus.py" "$WORK/corpus"

BENCH=$HERE/train-bench.hcl
ONE="-var profile=h200-x1 -var gpus=1 -var data=$WORK/random"
TWO="-var profile=h200-x2 -var gpus=2 -var data=$WORK/random"
# Each run: its folder (D and E share the lab's), the stage it measures,
# what it is, its workload and variables.
declare -A DIR ADDR TITLE WL VARS
run() { DIR[$1]=$2 ADDR[$1]=$3 TITLE[$1]=$4 WL[$1]=$5 VARS[$1]=$6; }
run A a pretrain.speed "1x H200, 1B shape, micro-batch 4, compiled" "$BENCH" "$ONE"
run B b pretrain.speed "1x H200, 1B shape, micro-batch 4, eager" "$BENCH" "$ONE -var framework=gpuflow-eager"
run C c pretrain.speed "4x H200, 1B shape, FSDP, micro-batch 4, compiled" "$BENCH" "-var profile=h200-x4 -var gpus=4 -var data=$WORK/random"
run D lab pretrain.small "h200-lab pre-train, 2x H200" "$REPO/workloads/h200-lab.hcl" "-var profile=h200-x2 -var corpus=$WORK/corpus/*"
run E lab finetune.small_lora "h200-lab LoRA fine-tune, 2x H200" "$REPO/workloads/h200-lab.hcl" "-var profile=h200-x2 -var corpus=$WORK/corpus/*"
run F f pretrain.speed "1x H200, 1B shape, micro-batch 8, full recompute" "$BENCH" "$ONE -var micro_batch=8 -var recompute=full"
run G g pretrain.speed "2x H200, 1B shape, FSDP, micro-batch 2, 2 per step" "$BENCH" "$TWO -var micro_batch=2 -var accumulation=2"
run H h pretrain.small "1x H200, h200-lab model, micro-batch 8, 4 per step" "$HERE/train-small.hcl" "-var profile=h200-x1 -var gpus=1 -var data=$WORK/small"
run I i pretrain.speed "2x H200, 1B shape, replicated (ZeRO 0), eager" "$BENCH" "$TWO -var fsdp=false -var framework=gpuflow-eager"
run J j pretrain.speed "2x H200, 1B shape untied, TP2 + sequence parallel" "$BENCH" "$TWO -var tp=2 -var tied=false"
run JT jt pretrain.speed "2x H200, 1B shape tied, TP2 + sequence parallel" "$BENCH" "$TWO -var tp=2 -var tied=true"
run K k pretrain.speed "2x H200, 1B shape untied, PP2 1F1B, micro-batch 2, 4 per step" "$BENCH" "$TWO -var pp=2 -var tied=false -var micro_batch=2 -var accumulation=4"
run L l pretrain.speed "1x H200, 1B shape, micro-batch 8, selective recompute" "$BENCH" "$ONE -var micro_batch=8 -var recompute=selective"
run M m pretrain.speed "2x H200, 1B shape untied, PP2 x VP2 interleaved, micro-batch 2, 4 per step" "$BENCH" "$TWO -var pp=2 -var vp=2 -var tied=false -var micro_batch=2 -var accumulation=4"
FOUR="-var profile=h200-x4 -var gpus=4 -var data=$WORK/random"
run N n pretrain.speed "1x H200, 1B shape, micro-batch 2, 4 per step" "$BENCH" "$ONE -var micro_batch=2 -var accumulation=4"
run O o pretrain.speed "4x H200, 1B shape, FSDP, micro-batch 8, selective recompute" "$BENCH" "$FOUR -var micro_batch=8 -var recompute=selective"
run P p pretrain.speed "2x H200, 1B shape untied, TP2 + sequence parallel, micro-batch 8, full recompute" "$BENCH" "$TWO -var tp=2 -var tied=false -var micro_batch=8 -var recompute=full"
run Q q pretrain.speed "4x H200, 1B shape untied, PP2 x DP2 (FSDP), micro-batch 2, 4 per step" "$BENCH" "$FOUR -var pp=2 -var tied=false -var micro_batch=2 -var accumulation=4"
run R r pretrain.small "1x H200, h200-lab model, micro-batch 16, 2 per step" "$HERE/train-small.hcl" "-var profile=h200-x1 -var gpus=1 -var micro_batch=16 -var accumulation=2 -var data=$WORK/small"
run S s pretrain.speed "4x H200, 1B shape untied, TP2 x DP2 (FSDP), micro-batch 4" "$BENCH" "$FOUR -var tp=2 -var tied=false"
run T t pretrain.speed "4x H200, 1B shape untied, PP4 1F1B, micro-batch 1, 8 per step" "$BENCH" "$FOUR -var pp=4 -var tied=false -var micro_batch=1 -var accumulation=8"
run U u pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 4" "$BENCH" "$FOUR -var tp=4 -var tied=false"
run V v pretrain.speed "2x H200, 1B shape, FSDP, micro-batch 4, 2 per step" "$BENCH" "$TWO -var accumulation=2"
run W w pretrain.speed "1x H200, 1B shape, micro-batch 4, 2 per step, full recompute" "$BENCH" "$ONE -var accumulation=2 -var recompute=full"
run X x pretrain.speed "4x H200, 1B shape untied, PP2 x TP2, micro-batch 2, 4 per step" "$BENCH" "$FOUR -var pp=2 -var tp=2 -var tied=false -var micro_batch=2 -var accumulation=4"
run U2 u2 pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 2" "$BENCH" "$FOUR -var tp=4 -var tied=false -var micro_batch=2"
run U8 u8 pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 8" "$BENCH" "$FOUR -var tp=4 -var tied=false -var micro_batch=8"
run UE ue pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 4, eager" "$BENCH" "$FOUR -var tp=4 -var tied=false -var framework=gpuflow-eager"
run T2 t2 pretrain.speed "4x H200, 1B shape untied, PP4 1F1B, micro-batch 2, 4 per step" "$BENCH" "$FOUR -var pp=4 -var tied=false -var micro_batch=2 -var accumulation=4"
run T4 t4 pretrain.speed "4x H200, 1B shape untied, PP4 1F1B, micro-batch 4, 4 per step" "$BENCH" "$FOUR -var pp=4 -var tied=false -var micro_batch=4 -var accumulation=4"
run UP up pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 4, NCCL_PROTO=Simple" "$BENCH" "$FOUR -var tp=4 -var tied=false"
run UH uh pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 4, NCCL streams at high priority" "$BENCH" "$FOUR -var tp=4 -var tied=false"
SMALL=$HERE/train-small.hcl
run Y y pretrain.small "2x H200, h200-lab model untied, TP2 + sequence parallel, micro-batch 8, 4 per step" "$SMALL" "-var profile=h200-x2 -var gpus=2 -var tp=2 -var tied=false -var data=$WORK/small"
run Z z pretrain.small "4x H200, h200-lab model untied, TP4 + sequence parallel, micro-batch 16, 2 per step" "$SMALL" "-var profile=h200-x4 -var gpus=4 -var tp=4 -var tied=false -var micro_batch=16 -var accumulation=2 -var data=$WORK/small"
run U6 u6 pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 6" "$BENCH" "$FOUR -var tp=4 -var tied=false -var micro_batch=6"
run UF uf pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 4, full recompute" "$BENCH" "$FOUR -var tp=4 -var tied=false -var recompute=full"
run J2 j2 pretrain.speed "2x H200, 1B shape untied, TP2 + sequence parallel, micro-batch 2" "$BENCH" "$TWO -var tp=2 -var tied=false -var micro_batch=2"
run X4 x4 pretrain.speed "4x H200, 1B shape untied, PP2 x TP2, micro-batch 4, 4 per step" "$BENCH" "$FOUR -var pp=2 -var tp=2 -var tied=false -var micro_batch=4 -var accumulation=4"
run K1 k1 pretrain.speed "2x H200, 1B shape untied, PP2 1F1B, micro-batch 1, 8 per step" "$BENCH" "$TWO -var pp=2 -var tied=false -var micro_batch=1 -var accumulation=8"
run Y16 y16 pretrain.small "2x H200, h200-lab model untied, TP2 + sequence parallel, micro-batch 16, 2 per step" "$SMALL" "-var profile=h200-x2 -var gpus=2 -var tp=2 -var tied=false -var micro_batch=16 -var accumulation=2 -var data=$WORK/small"
run Z8 z8 pretrain.small "4x H200, h200-lab model untied, TP4 + sequence parallel, micro-batch 8, 4 per step" "$SMALL" "-var profile=h200-x4 -var gpus=4 -var tp=4 -var tied=false -var data=$WORK/small"
run JS js pretrain.speed "2x H200, 1B shape untied, TP2 + sequence parallel, selective recompute" "$BENCH" "$TWO -var tp=2 -var tied=false -var recompute=selective"
run US us pretrain.speed "4x H200, 1B shape untied, TP4 + sequence parallel, micro-batch 4, selective recompute" "$BENCH" "$FOUR -var tp=4 -var tied=false -var recompute=selective"
run X1 x1 pretrain.speed "4x H200, 1B shape untied, PP2 x TP2, micro-batch 1, 8 per step" "$BENCH" "$FOUR -var pp=2 -var tp=2 -var tied=false -var micro_batch=1 -var accumulation=8"
run XS xs pretrain.speed "4x H200, 1B shape untied, PP2 x TP2, micro-batch 4, 4 per step, selective recompute" "$BENCH" "$FOUR -var pp=2 -var tp=2 -var tied=false -var micro_batch=4 -var accumulation=4 -var recompute=selective"

# Plan everything first: no prediction sees a measurement.
: > "$WORK/runs.tsv"
for id in $ALL; do
	wanted "$id" || continue
	d=$WORK/run-${DIR[$id]}
	printf '%s\t%s\t%s\t%s\n' "$id" "$d" "${ADDR[$id]}" "${TITLE[$id]}" >> "$WORK/runs.tsv"
	[ -f "$d/plan.json" ] && continue
	mkdir -p "$d"
	# shellcheck disable=SC2086 # VARS holds several words
	(cd "$d" && "$GF" plan -json -no-color ${VARS[$id]} "${WL[$id]}" > plan.json 2> plan.err)
	say "$id planned: exit $?"
done

# queue DEVICES LIMIT ID...: apply the runs one after another on DEVICES,
# each within LIMIT seconds (the lab's within twice that).
queue() {
	local devices=$1 limit=$2 id
	shift 2
	for id in "$@"; do
		wanted "$id" || continue
		local d=$WORK/run-${DIR[$id]} l=$limit
		[ "$id" = E ] && wanted D && continue # D's apply runs E too
		[ "$id" = D ] && l=$((2 * limit))
		# shellcheck disable=SC2086 # EXTRA holds NAME=value words
		(cd "$d" && env ${EXTRA[$id]:-} CUDA_VISIBLE_DEVICES=$devices GPUFLOW_TRAIN_CHECKPOINT=${CKPT[$id]:-0} timeout -k 15 "$l" "$GF" apply -auto-approve -no-color ${VARS[$id]} "${WL[$id]}" >> apply.log 2>&1)
		say "$id on GPUs $devices: apply exit $?"
	done
}
# The lab workload checkpoints its pre-train for the fine-tune to start from.
declare -A CKPT=([D]=1 [E]=1)
# Extra environment for a run's apply (the plan does not see it).
declare -A EXTRA=([UP]="NCCL_PROTO=Simple" [UH]="TORCH_NCCL_HIGH_PRIORITY=1")

say "phase 1: GPUs 2,3 D-E G I M P V J2; GPU 0 A F N R W; GPU 1 B H L"
queue 2,3 140 D E G I M P V J2 &
PAIR=$!
(queue 0 140 A F N R W) &
G0=$!
(queue 1 140 B H L) &
G1=$!
wait $G0 $G1
say "phase 2: GPUs 0,1 J JT K Y K1 Y16 JS"
queue 0,1 140 J JT K Y K1 Y16 JS
wait $PAIR
say "phase 3: GPUs 0-3 C O Q S T U X U2 U8 UE T2 T4 UP UH Z U6 UF X4 Z8 US X1 XS"
queue 0,1,2,3 140 C O Q S T U X U2 U8 UE T2 T4 UP UH Z U6 UF X4 Z8 US X1 XS

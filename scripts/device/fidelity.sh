#!/bin/bash
# Fidelity of the benchmark plugin: its gemm, hbm, p2p and nccl checks and
# PyTorch's equivalents on the same GPUs in one go, then a side-by-side
# table (figure, gpuflow, PyTorch, ratio).
#
# Here (build machine), from the repository root:
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o .device/gpubench ./plugins/gpubench/cmd/gpubench
#   gzip -kf .device/gpubench
# There (GPU machine), from the repository root, with .device/gpubench.gz carried:
#   PROFILE=h200-x4 [ROUNDS=3] bash scripts/device/fidelity.sh [gemm,hbm,p2p,nccl]
# Results: $OUT/fidelity.md (the table), $OUT/run.log, $OUT/fidelity.tgz (every JSON and log).
set -uo pipefail
# NVLink multicast stays off on these shared virtual machines (docs/hardware.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
CHECKS=${1:-gemm,hbm,p2p,nccl}
PROFILE=${PROFILE:-h200-x4}
OUT=${OUT:-/tmp/fidelity-out}
WORK=$(mktemp -d)
HERE=$(dirname "$0")
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1

BIN=.device/gpubench
if [ -f .device/gpubench.gz ]; then
	gunzip -c .device/gpubench.gz > "$WORK/gpubench" && chmod +x "$WORK/gpubench" && BIN="$WORK/gpubench"
fi
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), checks $CHECKS, profile $PROFILE"
nvidia-smi topo -m > "$WORK/topo.txt" 2>&1 && cat "$WORK/topo.txt"

# Both sides use the NCCL that PyTorch loads, so the comparison is of the
# callers, not of two NCCL builds.
NCCL_LIB=$(python3 -c 'import glob, site
for d in site.getsitepackages():
    for p in glob.glob(d + "/nvidia/**/libnccl.so.2", recursive=True):
        print(p); raise SystemExit' 2>/dev/null)
[ -n "$NCCL_LIB" ] && export GPUFLOW_LIBNCCL="$NCCL_LIB"
echo "NCCL for both: ${NCCL_LIB:-system}"

# ROUNDS > 1 repeats the NCCL sweep on both sides, alternating, and the
# comparison takes each side's best per op and size (mid sizes move by
# several percent from run to run on either side).
ROUNDS=${ROUNDS:-1}
for c in health ${CHECKS//,/ }; do
	echo "== gpuflow $c"
	timeout -k 10 240 "$BIN" -q -profile "$PROFILE" -json "$WORK/gf_$c.json" "$HERE/fidelity_$c.hcl" > "$WORK/gf_$c.txt" 2>&1
	echo "exit $?"
	cat "$WORK/gf_$c.txt"
done

echo "== PyTorch $CHECKS"
timeout -k 10 300 python3 "$HERE/fidelity.py" torch --checks "$CHECKS" --json "$WORK/torch.json"
echo "exit $?"

gf=()
for c in ${CHECKS//,/ }; do [ -s "$WORK/gf_$c.json" ] && gf+=("$WORK/gf_$c.json"); done
pt=("$WORK/torch.json")
if [[ ",$CHECKS," == *",nccl,"* ]]; then
	for r in $(seq 2 "$ROUNDS"); do
		echo "== round $r: gpuflow nccl, then PyTorch nccl"
		timeout -k 10 240 "$BIN" -q -profile "$PROFILE" -json "$WORK/gf_nccl_$r.json" "$HERE/fidelity_nccl.hcl" > "$WORK/gf_nccl_$r.txt" 2>&1
		[ -s "$WORK/gf_nccl_$r.json" ] && gf+=("$WORK/gf_nccl_$r.json")
		timeout -k 10 300 python3 "$HERE/fidelity.py" torch --checks nccl --json "$WORK/torch_$r.json"
		[ -s "$WORK/torch_$r.json" ] && pt+=("$WORK/torch_$r.json")
	done
fi
python3 "$HERE/fidelity.py" compare --gpuflow "${gf[@]}" --torch "${pt[@]}" --md "$OUT/fidelity.md"
tar czf "$OUT/fidelity.tgz" -C "$WORK" --exclude gpubench .

#!/bin/bash
# GEMM efficiency by shape: the benchmark plugin's square sweep (bf16,
# fp16, 256 to 16384) and a rectangular sweep of transformer-layer shapes
# in PyTorch (bf16), on one GPU.
#
# Here (build machine), from the repository root:
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o .device/gpubench ./plugins/gpubench/cmd/gpubench
#   gzip -kf .device/gpubench
# There (GPU machine), from the repository root, with .device/gpubench.gz carried:
#   PROFILE=h100-x1 bash scripts/device/gemm_shapes.sh
# Results: $OUT/gemm_square.json, $OUT/gemm_square.txt, $OUT/gemm_rect.json, $OUT/run.log.
set -uo pipefail
PROFILE=${PROFILE:-h100-x1}
OUT=${OUT:-/tmp/gemm-shapes-out}
WORK=$(mktemp -d)
HERE=$(dirname "$0")
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1

BIN=.device/gpubench
if [ -f .device/gpubench.gz ]; then
	gunzip -c .device/gpubench.gz > "$WORK/gpubench" && chmod +x "$WORK/gpubench" && BIN="$WORK/gpubench"
fi
# cuBLASLt from PyTorch's wheels when the system has none.
if [ -z "${GPUFLOW_CUDA_LIB_DIR:-}" ]; then
	CUBLAS=$(python3 -c 'import glob, os, site
for d in site.getsitepackages():
    for p in glob.glob(d + "/nvidia/**/libcublasLt.so*", recursive=True):
        print(os.path.dirname(p)); raise SystemExit' 2>/dev/null)
	[ -n "$CUBLAS" ] && ! ldconfig -p | grep -q libcublasLt && export GPUFLOW_CUDA_LIB_DIR="$CUBLAS"
fi
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader | head -1), profile $PROFILE"
echo "== gpuflow gemm (square)"
timeout -k 10 150 "$BIN" -q -profile "$PROFILE" -json "$OUT/gemm_square.json" "$HERE/gemm_shapes.hcl" > "$OUT/gemm_square.txt" 2>&1
echo "exit $?"
cat "$OUT/gemm_square.txt"
echo "== PyTorch gemm (rectangular)"
timeout -k 10 120 python3 "$HERE/gemm_shapes.py" "$OUT/gemm_rect.json" > "$WORK/rect.log" 2>&1
echo "exit $?"
tail -3 "$WORK/rect.log"

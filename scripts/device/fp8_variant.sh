#!/bin/bash
# python3, after copying variants/$FP8_VARIANT.py (fp8_variants.py writes
# them beside this script) over the run's trainer/fp8.py. speed.sh runs
# take it as GPUFLOW_PYTHON=@DEV@/fp8_variant.sh FP8_VARIANT=NAME.
V=$(dirname "$(readlink -f "$0")")/variants/$FP8_VARIANT.py
for a in "$@"; do
	case $a in */trainer/train.py) cp "$V" "$(dirname "$a")/fp8.py" || exit 1 ;; esac
done
exec python3 "$@"

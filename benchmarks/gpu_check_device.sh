#!/usr/bin/env bash
# The GPU check on a machine with no network (the lent H200): install the carried wheels
# (python -m benchmarks.prepare_wheels) and referee into /tmp/site, then run the check.
# Run from the repository root; extra arguments go to benchmarks.gpu_check. Writes
# $OUT/gpu_check.json (the device tool's output folder) or benchmarks/results/gpu_check.json.
set -euo pipefail
WHEELS=${WHEELS:-runs/wheels}
SITE=${SITE:-/tmp/site}
RESULT=${OUT:-benchmarks/results}/gpu_check.json
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$WHEELS"/*.whl
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --no-cache-dir --target "$SITE" .
export PYTHONPATH="$SITE" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python3 -m benchmarks.gpu_check --out "$RESULT" "$@"

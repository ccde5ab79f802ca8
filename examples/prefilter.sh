#!/bin/sh
# Pre-filter prompts by pass rate with the demo model: 8 samples per prompt, keep the rows solved
# at least once and failed at least once. From the repository root, after `referee demo`:
#
#   sh examples/prefilter.sh                            # runs/demo/model on examples/sums.jsonl
#   sh examples/prefilter.sh MODEL DATA OUT [OPTION ...]   # e.g. --temperature 0.5 --save-samples
#
# The prompt is the gsm8k loader's `question` column wrapped as a bare user message (as the demo
# model was taught sums), the gold the `answer` column that gsm8k_accuracy reads. Results in OUT:
# all.jsonl, kept.jsonl, report.json and pass_rate_hist.png (README: Pre-filtering prompts).
set -eu
MODEL=${1:-runs/demo/model}
DATA=${2:-examples/sums.jsonl}
OUT=${3:-runs/prefilter-sums}
[ $# -gt 3 ] && shift 3 || shift $#
exec "${REFEREE:-referee}" prefilter --model "$MODEL" --data "$DATA" --out "$OUT" \
    --prompt-column question --chat-template always --reward gsm8k_accuracy \
    --num-generations 8 --max-tokens 8 --keep 0.125:0.875 --backend transformers --device cpu "$@"

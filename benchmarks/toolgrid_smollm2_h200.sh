#!/usr/bin/env bash
# SmolLM2-135M-Instruct on ToolGrid on the single-H200 machine: the pre-flight gap check
# before and after the short supervised warm start of configs/toolgrid-smollm2.toml, at the
# full check sizes (300 teacher-forced tasks, 100 + 100 sampled episodes, batched in one KV
# cache on the GPU), and the check after the student's own mistakes (up to 256 unhinted
# episodes sampled 64 at a time until 100 failed calls a detector fires on are found).
#
#     bash benchmarks/toolgrid_smollm2_h200.sh
#         -> benchmarks/results/toolgrid_smollm2_gap_check.json
#
# Not run yet: no GPU machine was lent when it was written (its CPU path is tested at tiny
# sizes in tests/test_toolgrid_pretrained.py).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD"
exec timeout 590 python benchmarks/toolgrid_smollm2_gap_check.py --device cuda --before \
    --mistake-episodes 256 --mistake-states 100 --chunk 64 "$@"

#!/usr/bin/env bash
# The warm start and a longer RL run of benchmarks/coding_agent_learning.py on one H200
# (meant to fit 10 minutes; never needed for CI). SFT trains on the GPU (device = cuda);
# the curriculum, demonstrations, the tool-call rate's sampling (HFBackend) and the loop
# run on the 16 CPU cores (the loop has no GPU path yet).
#
#     bash benchmarks/coding_agent_learning_h200.sh [OUT_DIR]
#
# Writes its run under "h200" in benchmarks/results/coding_agent_learning.json (beside
# the CPU run's figures). Not yet run: no GPU was available when it was written.
set -euo pipefail
cd "$(dirname "$0")/.."
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-.venv/bin/python}"
S=~/.cache/etude/sdists
SDISTS=("$S/inflection-0.5.1.tar.gz" "$S/cachetools-5.5.0.tar.gz")  # the CPU run's repositories
timeout 590 "$PY" benchmarks/coding_agent_learning.py \
    --out "${1:-runs/coding-agent-learning-h200}" \
    --seeds 0 1 2 --sdist "${SDISTS[@]}" --max-candidates 6 --per-task 4 --first-turns \
    --sft-steps 60 --batch-size 8 --train-layers 0 --lr 0.02 \
    --then-whole-steps 40 --then-whole-lr 0.005 --sft-max-tokens 4608 \
    --samples 8 --iterations 4 --turn-tokens 384 --episode-tokens 1024 --max-turns 4 \
    --device cuda --key h200

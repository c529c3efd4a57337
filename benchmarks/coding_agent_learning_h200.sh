#!/usr/bin/env bash
# The warm start and a longer RL run of benchmarks/coding_agent_learning.py on one H200
# (never needed for CI), on the recipe measured best on CPU (docs/coding-loop.md, "Every
# layer, cut through the last write"): the small-task curriculum of four sdists, one-path
# demonstrations cut through their last write, SFT on the GPU (device = cuda) on every
# layer (20 steps of 4 at Muon lr 0.01, as measured on CPU), then RL from it for 4
# iterations on 3 seeds. The
# curriculum, the demonstrations, the tool-call rate's sampling (HFBackend) and the loop
# run on the machine's CPU cores (the loop has no GPU path yet).
#
#     bash benchmarks/coding_agent_learning_h200.sh prepare [OUT_DIR]
#         the curriculum and demonstrations, CPU only, on any machine (about 15 minutes on
#         2 cores; the sdists must be in ~/.cache/etude/sdists, see below); bring OUT_DIR
#         along to the GPU machine
#     bash benchmarks/coding_agent_learning_h200.sh [OUT_DIR]
#         SFT, tool-call rate and RL, meant to fit 10 minutes on one H200 with OUT_DIR
#         prepared (it stops at 590 s; rerun to resume: every stage is kept under OUT_DIR)
#
# The sdists (from PyPI, on a machine with network):
#     mkdir -p ~/.cache/etude/sdists && cd ~/.cache/etude/sdists && python3 -m pip download \
#         --no-deps --no-binary :all: inflection==0.5.1 cachetools==5.5.0 \
#         more-itertools==10.5.0 toolz==1.0.0 -d .
#
# Writes its run under "h200" in benchmarks/results/coding_agent_learning.json (beside
# the CPU runs' figures). Not yet run: no GPU was available when it was written.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-.venv/bin/python}"
S=~/.cache/etude/sdists
DATA=(--sdist "$S/inflection-0.5.1.tar.gz" "$S/cachetools-5.5.0.tar.gz"
    "$S/more-itertools-10.5.0.tar.gz" "$S/toolz-1.0.0.tar.gz"
    --max-candidates 10 --max-lines 40 --per-task 4 --style plain)
if [ "${1:-}" = prepare ]; then
    exec "$PY" benchmarks/coding_agent_learning.py --out "${2:-runs/coding-agent-learning-h200}" \
        "${DATA[@]}" --only-data --key h200-data
fi
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
timeout 590 "$PY" benchmarks/coding_agent_learning.py \
    --out "${1:-runs/coding-agent-learning-h200}" "${DATA[@]}" --through-last-write \
    --seeds 0 1 2 --sft-steps 20 --batch-size 4 --train-layers 0 --lr 0.01 \
    --sft-max-tokens 4608 --samples 8 --iterations 4 \
    --turn-tokens 512 --episode-tokens 1536 --device cuda --key h200

#!/usr/bin/env bash
# The warm start and a longer RL run of benchmarks/coding_agent_learning.py on one H200
# (never needed for CI), on the recipe measured last on CPU (docs/coding-agent-learning.md,
# "Top demonstrations"): the curriculum of the example repository and six sdists split with
# split seed 1, one top-style demonstration per train task cut through its last write, SFT
# on every layer (30 steps of 4 at Muon lr 0.01), then RL from it (groups of 4 on 4 tasks an
# iteration) on 3 seeds, 2 episodes per held-out task. With `--device cuda` the policy
# samples every turn, and SFT and RL's update run, on the GPU; episodes, grading and the
# monitor run on the machine's CPU cores (8 episodes at once).
#
#     bash benchmarks/coding_agent_learning_h200.sh prepare [OUT_DIR]
#         the curriculum and demonstrations, CPU only, on any machine (about 15 minutes on
#         2 cores; the sdists must be in ~/.cache/etude/sdists, see below), then
#         OUT_DIR.tar.gz: them without the synthesis work (curriculum/synth), small enough
#         to carry to the GPU machine (the tasks' repositories compress well)
#     bash benchmarks/coding_agent_learning_h200.sh [OUT_DIR]
#         SFT, tool-call rate and RL on the GPU machine, unpacking OUT_DIR.tar.gz first when
#         OUT_DIR is not there; it stops at 590 s; rerun to resume (every stage is kept under
#         OUT_DIR, each seed's RL resumes from its checkpoint)
#
# The sdists (from PyPI, on a machine with network):
#     mkdir -p ~/.cache/etude/sdists && cd ~/.cache/etude/sdists && python3 -m pip download \
#         --no-deps --no-binary :all: inflection==0.5.1 cachetools==5.5.0 \
#         more-itertools==10.5.0 toolz==1.0.0 funcy==2.1 humanize==4.17.0 -d .
#
# Writes its run under "h200" in benchmarks/results/coding_agent_learning.json (beside
# the CPU runs' figures). Not yet run: no GPU was lent when it was written.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-.venv/bin/python}"
S=~/.cache/etude/sdists
DATA=(--sdist "$S/inflection-0.5.1.tar.gz" "$S/cachetools-5.5.0.tar.gz"
    "$S/more-itertools-10.5.0.tar.gz" "$S/toolz-1.0.0.tar.gz" "$S/funcy-2.1.tar.gz"
    "$S/humanize-4.17.0.tar.gz" --split-seed 1 --max-candidates 40 --max-lines 40
    --per-task 1 --style top)
if [ "${1:-}" = prepare ]; then
    OUT="${2:-runs/coding-agent-learning-h200}"
    "$PY" benchmarks/coding_agent_learning.py --out "$OUT" "${DATA[@]}" --only-data \
        --key h200-data
    tar czf "$OUT.tar.gz" --exclude="$(basename "$OUT")/curriculum/synth" \
        -C "$(dirname "$OUT")" "$(basename "$OUT")"
    du -h "$OUT.tar.gz"
    exit 0
fi
OUT="${1:-runs/coding-agent-learning-h200}"
if [ ! -d "$OUT" ] && [ -f "$OUT.tar.gz" ]; then
    mkdir -p "$(dirname "$OUT")" && tar xzf "$OUT.tar.gz" -C "$(dirname "$OUT")"
fi
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
timeout 590 "$PY" benchmarks/coding_agent_learning.py --out "$OUT" "${DATA[@]}" \
    --through-last-write --seeds 0 1 2 --sft-steps 30 --batch-size 4 --train-layers 0 \
    --lr 0.01 --sft-max-tokens 4608 --samples 8 --heldout-samples 2 --iterations 4 \
    --group-size 4 --tasks-per-iteration 4 --turn-tokens 768 --episode-tokens 2048 \
    --concurrency 8 --device cuda --key h200

#!/usr/bin/env bash
# The feedback-modes experiment on SmolLM2-135M-Instruct at the GPU sizes of
# configs/toolgrid-smollm2.toml (warm start 150 steps of 16, 40 RL steps of 16 episodes on
# every layer, 48-episode evaluations every 10 steps, the full gap check, 240-episode final
# evaluations), 5 seeds of RL only, KL to the live hinted teacher (λ = 0.5) and advantage
# re-weighting with a frozen teacher: 15 runs, 5 at a time on the one GPU (`--device cuda`:
# sampling, updates and evaluations on the GPU; the sampling generators on the CPU).
#
#     bash benchmarks/textual_feedback_smollm2_h200.sh
#         -> benchmarks/results/textual_feedback_smollm2_h200/textual_feedback_modes.json, .png
#
# Resumable: a rerun reuses the warm start, the gap check and every finished run in
# runs/toolgrid-smollm2/experiment-modes/, so a second call finishes what the 590 s limit
# cut. Not run yet: no GPU machine was available when it was written; the time is a guess
# (one run is ~1,100 episodes of a 135M model, sampled in batches of 16 to 240).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD" OMP_NUM_THREADS=2
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
exec timeout 590 "${PYTHON:-.venv/bin/python}" benchmarks/textual_feedback_experiment.py \
    --config configs/toolgrid-smollm2.toml --device cuda --seeds 0 1 2 3 4 --workers 5 \
    --arms "kl λ=0.5" "advantage_weight frozen" \
    --out benchmarks/results/textual_feedback_smollm2_h200 "$@"

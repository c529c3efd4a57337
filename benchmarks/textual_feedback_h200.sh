#!/usr/bin/env bash
# The 5-seed feedback-modes experiment on the single-H200 machine (16 CPU cores, 128 GiB):
# 6 arms x 5 seeds = 30 runs, 15 at a time, from the warm start, gap check and finished
# runs this checkout's runs/toolgrid/experiment-modes/ already holds, or else from the warm
# start in runs/toolgrid/warm-starts/ (shared with the RL sweep). Carry runs/toolgrid: the
# warm start took about 25 minutes on the shared 2-core machine and is not resumable midway,
# so without it the 590 s limit would end the command before any arm ran.
#
#     bash benchmarks/textual_feedback_h200.sh
#         -> benchmarks/results/textual_feedback_modes.json and .png
#
# The tiny byte policy is too small to gain from the GPU: it runs on the machine's CPU
# cores, one thread per run (the ToolGrid RL trainer has no CUDA path). Not run
# yet: no GPU machine was available when it was written. Resumable like the CPU version.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD" OMP_NUM_THREADS=1
exec timeout 590 python benchmarks/textual_feedback_experiment.py \
    --seeds 0 1 2 3 4 --workers 15 "$@"

"""The ToolGrid textual-feedback experiment (the same as `etude rl experiment toolgrid`).

Arms (RL only; RL + targeted KL at λ = 0.5 and 2.0; RL + the same KL over the whole
trajectory; placebo hints), 5 seeds each, the same episode budget, success on held-out tool
registries with paired-by-seed bootstrap intervals. Sizes come from configs/toolgrid.toml.

    .venv/bin/python benchmarks/textual_feedback_experiment.py
        -> benchmarks/results/textual_feedback.json and textual_feedback.png
    .venv/bin/python benchmarks/textual_feedback_experiment.py --from-logs
        rebuilds the summary from the runs' logs (arms whose seeds all finished)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from etude.recipes.toolgrid.experiment import main, summarize_logs
from etude.recipes.toolgrid.train import load_config

RESULTS = Path(__file__).parent / "results"
CONFIG = Path(__file__).parents[1] / "configs" / "toolgrid.toml"

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--from-logs", action="store_true")
    args = parser.parse_args()
    base = load_config(CONFIG)
    runs = Path(base.out_dir) / "experiment"
    if args.from_logs:
        summarize_logs(runs, base, [0, 1, 2, 3, 4], (0.5, 2.0), RESULTS)
    else:
        main(str(RESULTS), config=str(CONFIG))

"""The configured ToolGrid warm start, checked as it trains: when does the policy read hints,
and when does it look names up on its own?

Runs the warm start of configs/toolgrid.toml (the same steps, data and bits as
`etude rl experiment toolgrid`, one thread) and every `--every` steps from `--first` runs the
hint-reading check (`etude.recipes.toolgrid.hint_reading`, held-out registries):
first-name-byte accuracy and median log-probability of the correct first call without a
hint (the student), with the tool-not-found hint naming the binding (the teacher) and with
the placebo sentence.
The experiment needs a teacher clearly better than the student; this shows where that holds.

    .venv/bin/python benchmarks/toolgrid_warm_start_sweep.py [--steps N] [--every K]
        -> benchmarks/results/toolgrid_warm_start_sweep.json   (~15 min for 1,400 steps)
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch

from etude.recipes.toolgrid.hint_reading import hint_reading, reads_hints
from etude.recipes.toolgrid.train import load_config, warm_started_policy

ROOT = Path(__file__).parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1400)
    parser.add_argument("--first", type=int, default=500)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=150, help="held-out tasks per check")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = load_config(ROOT / "configs/toolgrid.toml")
    cfg = replace(cfg, warm_start=replace(cfg.warm_start, steps=args.steps))
    tg = cfg.toolgrid
    train, _ = tg.registries()
    rows, start = [], time.perf_counter()

    def check(step: int, loss: float, policy) -> None:
        done = step + 1
        if done < args.first or done % args.every:
            return
        policy.eval()
        result = hint_reading(policy, cfg, tasks=args.tasks, seed=7)
        policy.train()
        row = {"step": done, "loss": loss, "reads_hints": reads_hints(result)}
        for c in ("none", "hint", "placebo"):
            row[c] = result[c]
        rows.append(row)
        print(
            f"step {done}: lookup alone {result['none']['first_name_byte_accuracy']:.2f}, "
            f"with the hint {result['hint']['first_name_byte_accuracy']:.2f}; hint gain "
            f"{result['hint']['median_logp_gain_vs_none']:+.2f} nats, placebo "
            f"{result['placebo']['median_logp_gain_vs_none']:+.2f}",
            flush=True,
        )

    warm_started_policy(cfg, train, check)
    out = {
        "what": "hint-reading check (held-out first calls, teacher forcing) during the "
        "configured warm start",
        "config": "configs/toolgrid.toml",
        "warm_start": vars(cfg.warm_start),
        "tasks_per_check": args.tasks,
        "chance_first_byte_among_offered": 1 / tg.n_tools,
        "seconds": round(time.perf_counter() - start, 1),
        "checks": rows,
    }
    path = Path(args.out) / "toolgrid_warm_start_sweep.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

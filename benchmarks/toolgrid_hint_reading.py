"""Can the warm-started ToolGrid policy read a hint? The diagnostic behind the experiment
(`etude.recipes.toolgrid.hint_reading`, which `etude rl experiment toolgrid` also runs as a gate).

Targeted textual feedback needs a teacher (the policy reading a hint) that acts better than the
student (the policy without it). This measures that directly on held-out registries, with
teacher forcing: for the first call of each task, the log-probability of the correct assistant
turn (`mul=pav` then `<call>pav {...}`) and whether the first byte of the tool name is the
arg-max, in three contexts that differ only in the message right before the turn —

- none: no extra message (the student);
- hint: the tool-not-found hint in the detectors' words, listing the available tools;
- placebo: the experiment's irrelevant sentence.

Looking the name up in the tool list is the skill the hint is about: picking one of the three
offered names at random gives a first-byte accuracy of 1/3.

    .venv/bin/python benchmarks/toolgrid_hint_reading.py [--policy PATH]
        (default: runs/toolgrid/experiment-modes/warm_start.pt, the experiment's warm start)
        -> benchmarks/results/toolgrid_hint_reading.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from etude.recipes.toolgrid.hint_reading import hint_reading, reads_hints
from etude.recipes.toolgrid.policy import BytePolicy
from etude.recipes.toolgrid.train import load_config

ROOT = Path(__file__).parents[1]
RESULTS = Path(__file__).parent / "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--policy", default=str(ROOT / "runs/toolgrid/experiment-modes/warm_start.pt")
    )
    parser.add_argument("--tasks", type=int, default=300)
    args = parser.parse_args()
    policy_path = Path(args.policy).resolve()
    if not policy_path.is_file():
        sys.exit(f"no policy at {policy_path}: run `etude rl experiment toolgrid` first")
    torch.set_num_threads(1)
    cfg = load_config(ROOT / "configs/toolgrid.toml")
    policy = BytePolicy(cfg.model.config())
    policy.load_state_dict(torch.load(policy_path, map_location="cpu"))
    policy.eval()
    out = {
        "policy": str(
            policy_path.relative_to(ROOT) if policy_path.is_relative_to(ROOT) else policy_path
        ),
        **hint_reading(policy, cfg, tasks=args.tasks),
    }
    out["reads_hints"] = reads_hints(out)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "toolgrid_hint_reading.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

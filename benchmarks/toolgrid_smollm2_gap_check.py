"""Does SmolLM2-135M-Instruct read ToolGrid's hints once it knows the tool-call format? The
pre-flight gap check (`etude.recipes.toolgrid.hint_reading.gap_check`) on the pretrained
model before and after its short supervised warm start on the environment's demonstrations
(configs/toolgrid-smollm2.toml: episodes in SmolLM2's chat template, calls as
`<tool_call>{...}</tool_call>` text; sampling batched over episodes in one KV cache).

Before the warm start SmolLM2 does not know the format, so its success is expected to be
about 0 and only the log-prob half says something; after it, both halves are the gate the
experiment applies.

    .venv/bin/python benchmarks/toolgrid_smollm2_gap_check.py [--device cuda] [--steps N]
        [--tasks 300] [--episodes 100] [--save runs/toolgrid-smollm2/warm_start.pt]
        -> benchmarks/results/toolgrid_smollm2_gap_check.json
    bash benchmarks/toolgrid_smollm2_h200.sh     # the same on one H200

The full sizes are for a GPU: on the shared 2-core CPU machine one warm-start step of
SmolLM2 takes seconds, and the check's 300 tasks and 200 episodes many minutes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

from etude.recipes.toolgrid.hint_reading import gap_check, predicts_benefit
from etude.recipes.toolgrid.train import load_config, new_policy, warm_started_policy

RESULTS = Path(__file__).parent / "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/toolgrid-smollm2.toml")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, help="warm-start steps (default: the config's)")
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--save", help="where to save the warm start's state dict")
    parser.add_argument("--out", default=str(RESULTS / "toolgrid_smollm2_gap_check.json"))
    args = parser.parse_args()
    cfg = load_config(args.config)
    if args.steps is not None:
        cfg = replace(cfg, warm_start=replace(cfg.warm_start, steps=args.steps))
    sizes = {"tasks": args.tasks, "episodes": args.episodes}
    t0 = time.perf_counter()
    before = gap_check(new_policy(cfg.model).to(args.device), cfg, **sizes)
    check_s = time.perf_counter() - t0
    print(f"before the warm start: {before['prediction']}", flush=True)
    losses: list[float] = []
    train, _ = cfg.toolgrid.registries()
    t0 = time.perf_counter()
    warm = warm_started_policy(
        cfg, train, lambda _step, loss, _policy: losses.append(loss), device=args.device
    )
    warm_s = time.perf_counter() - t0
    if args.save:
        Path(args.save).parent.mkdir(parents=True, exist_ok=True)
        torch.save(warm.state_dict(), args.save)
    after = gap_check(warm, cfg, **sizes)
    print(f"after the warm start: {after['prediction']}", flush=True)
    tenth = max(len(losses) // 10, 1)
    out = {
        "config": args.config,
        "pretrained": cfg.model.pretrained,
        "device": args.device,
        "warm_start": {
            "steps": cfg.warm_start.steps,
            "batch": cfg.warm_start.batch,
            "lr": cfg.warm_start.lr,
            "seconds": round(warm_s, 1),
            "loss_first_tenth_median": statistics.median(losses[:tenth]) if losses else None,
            "loss_last_tenth_median": statistics.median(losses[-tenth:]) if losses else None,
        },
        "gap_check_seconds": round(check_s, 1),
        "before_warm_start": before | {"predicts_benefit": predicts_benefit(before)},
        "after_warm_start": after | {"predicts_benefit": predicts_benefit(after)},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

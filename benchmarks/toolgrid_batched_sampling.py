"""Episodes per second of ToolGrid sampling: one episode at a time (`rollout`, what the
trainer did before) against many in one KV cache (`rollouts`, per-row `start_pos`), side by
side in one run.

The policy is the configured tiny byte policy after a short warm start (`--warm-steps`), so
its turns have a trained policy's mix of tool calls, answers and early stops (a random
policy's turns all run to the token limit). The episodes are the evaluation's: held-out
registries, the configured temperature and limits, each episode seeded on its own, so both
ways play the same tokens; the benchmark counts the episodes whose messages or sampled ids
differ (it should be 0). Each repeat times every way once, in turn; the figures are medians over
repeats, and the speed-ups the medians of the per-repeat ratios. One thread, as the
experiment's workers run.

    .venv/bin/python benchmarks/toolgrid_batched_sampling.py [--episodes 64] [--repeats 5]
        -> benchmarks/results/toolgrid_batched_sampling.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

from etude.envs.toolgrid import Episode
from etude.recipes.toolgrid.train import (
    episode_seeds,
    eval_tasks,
    load_config,
    warm_started_policy,
)
from etude.rl.trajectory import ByteChat, without_samples
from etude.serving.native import rollout, rollouts

ROOT = Path(__file__).parents[1]
RESULTS = Path(__file__).parent / "results"


def _tokens(ep: Episode) -> tuple[list, list]:
    """The episode's messages (without samples) and every sampled turn's ids."""
    ids = [m["sample"]["ids"] for m in ep.messages if "sample" in m]
    return without_samples(ep.messages), ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--warm-steps", type=int, default=150)
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = load_config(ROOT / "configs/toolgrid.toml")
    cfg = replace(
        cfg,
        warm_start=replace(cfg.warm_start, steps=args.warm_steps),
        eval=replace(cfg.eval, episodes=args.episodes),
    )
    train_regs, _ = cfg.toolgrid.registries()
    start = time.perf_counter()
    policy = warm_started_policy(cfg, train_regs).eval()
    warm_s = time.perf_counter() - start
    tasks = eval_tasks(cfg)
    seeds = episode_seeds(random.Random(0), len(tasks))
    tok = ByteChat()
    limits = {
        "temperature": cfg.rl.temperature,
        "max_turn_tokens": cfg.rl.max_turn_tokens,
        "max_len": cfg.model.max_seq_len,
    }

    def one_at_a_time() -> list[Episode]:
        episodes = [Episode(t, cfg.toolgrid.slack) for t in tasks]
        for ep, s in zip(episodes, seeds):
            rollout(policy, tok, ep, torch.Generator().manual_seed(s), **limits)
        return episodes

    def batched(size: int):
        def run() -> list[Episode]:
            episodes = [Episode(t, cfg.toolgrid.slack) for t in tasks]
            for at in range(0, len(episodes), size):
                gens = [torch.Generator().manual_seed(s) for s in seeds[at : at + size]]
                rollouts(policy, tok, episodes[at : at + size], gens, **limits)
            return episodes

        return run

    ways = {"one_at_a_time": one_at_a_time} | {f"batch_{b}": batched(b) for b in args.batches}
    seconds: dict[str, list[float]] = {w: [] for w in ways}
    played: dict[str, list[Episode]] = {}
    for _ in range(args.repeats):
        for name, run in ways.items():
            t0 = time.perf_counter()
            played[name] = run()
            seconds[name].append(time.perf_counter() - t0)
    reference = played["one_at_a_time"]
    turns = [ep.assistant_turns() for ep in reference]
    out = {
        "policy": f"configs/toolgrid.toml model, warm start of {args.warm_steps} steps",
        "warm_start_seconds": round(warm_s, 1),
        "episodes": len(tasks),
        "repeats": args.repeats,
        "threads": 1,
        "assistant_turns_per_episode": {"min": min(turns), "max": max(turns)},
        "success_rate": sum(ep.reward for ep in reference) / len(reference),
        "median_episodes_per_s": {
            w: round(len(tasks) / statistics.median(s), 2) for w, s in seconds.items()
        },
        "median_speedup_vs_one_at_a_time": {
            w: round(statistics.median(a / b for a, b in zip(seconds["one_at_a_time"], s)), 2)
            for w, s in seconds.items()
            if w != "one_at_a_time"
        },
        "episodes_differing_from_one_at_a_time": {
            w: sum(_tokens(a) != _tokens(b) for a, b in zip(reference, eps))
            for w, eps in played.items()
            if w != "one_at_a_time"
        },
        "seconds": {w: [round(x, 3) for x in s] for w, s in seconds.items()},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "toolgrid_batched_sampling.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Which RL step improves the warm-started ToolGrid policy at all? RL only (no hints), from the
feedback-modes experiment's warm start (configs/toolgrid.toml), with the RL step's settings
varied side by side: the configured step (Muon, lr 1e-3, 4 tasks x 4 rollouts x 40 steps), no
optimizer step on a batch without signal, a lower Muon learning rate, AdamW at a lower learning
rate, twice the episodes per update (half the updates), RL tasks on registries drawn fresh
(never the warm start's training registries, never held-out ones), and the policy-gradient term
averaged per trajectory before the trajectories (GRPO's sequence aggregation) instead of over
all tokens. Every setting gets the same 640 episodes per run (the last two, a check of the
budget, four times as many) and the same seeds; every final policy and the warm start are then
evaluated on the experiment's 240 held-out episodes per seed (the same tasks and sampling seeds
for all, so differences are paired by seed), and per setting the summary gives the paired
difference to the warm start and to the configured step, with the diagnostics the logs hold:
the share of updates without signal (every group's rewards equal), the per-token entropy
estimate of the rollouts (`sampled_nll`) at the start and end, training reward at the start and
end, and the ratio statistics.

    nice -n 10 .venv/bin/python benchmarks/toolgrid_rl_sweep.py [--seeds 0 1] [--workers 2]
        -> benchmarks/results/toolgrid_rl_sweep.json
        (14 runs of about 3 minutes and 4 of about 12, two at a time, plus the final
        evaluations; the warm start is shared with the experiment through
        runs/toolgrid/warm-starts/, about 20 minutes when it is not there yet)

It resumes: a run whose log is complete and whose config is unchanged is not run again.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from etude.recipes.toolgrid.experiment import (
    WARM_START,
    arms,
    cached_warm_start,
    final_evaluation,
    paired_bootstrap,
    run_dir_name,
)
from etude.recipes.toolgrid.train import RunConfig, load_config, new_policy, train

ROOT = Path(__file__).parents[1]
# name -> [rl] settings changed from the configured RL-only arm; "rl" is the configured step
# (run in this order, a setting's seeds together, so that an interrupted sweep has whole
# settings; the in-run evaluation only at the start and the end: the final evaluation on
# 240 episodes is the comparison, and it extends the last in-run one)
SETTINGS: dict[str, dict] = {  # name -> {"rl": [rl] changes, "loss": [loss] changes}
    "muon lr=1e-3 skip no-signal": {"rl": {"skip_no_signal": True}},
    "adamw lr=1e-4": {"rl": {"optimizer": "adamw", "lr": 1e-4}},
    "muon lr=3e-4": {"rl": {"lr": 3e-4}},
    "muon lr=1e-3 8 tasks x 4, 20 steps": {"rl": {"tasks_per_step": 8, "steps": 20}},
    "rl": {},
    "muon lr=1e-3 fresh registries": {"rl": {"fresh_registries": True}},
    "muon lr=1e-3 sequence aggregation": {"loss": {"aggregation": "sequence"}},
    # four times the budget (2,560 episodes) for the two gentlest steps: is 640 too few?
    "muon lr=3e-4, 160 steps": {"rl": {"lr": 3e-4, "steps": 160}},
    "adamw lr=1e-4, 160 steps": {"rl": {"optimizer": "adamw", "lr": 1e-4, "steps": 160}},
}

# the two settings that ended above the warm start on seeds 0 and 1, again on a third seed
CONFIRM: dict[str, tuple[int, ...]] = {
    "muon lr=3e-4, 160 steps": (2,),
    "adamw lr=1e-4, 160 steps": (2,),
}


def sweep_configs(base: RunConfig) -> dict[str, RunConfig]:
    """The RL-only arm of the experiment with each setting's `[rl]` changes."""
    rl_only = arms(base, 0.5)["rl"]
    out = {}
    for name, changes in SETTINGS.items():
        rl = replace(rl_only.rl, **changes.get("rl", {}))
        loss = replace(rl_only.loss, **changes.get("loss", {}))
        out[name] = replace(rl_only, rl=rl, loss=loss, eval=replace(rl_only.eval, every=rl.steps))
    return out


def _run(job: tuple[str, int, RunConfig, dict]) -> tuple[str, int, float]:
    name, seed, cfg, state = job
    torch.set_num_threads(1)
    policy = new_policy(cfg.model)
    policy.load_state_dict(state)
    start = time.perf_counter()
    train(cfg, policy=policy, progress=False)
    return name, seed, time.perf_counter() - start


def diagnostics(log: list[dict]) -> dict:
    """What one run's log says about its updates (see the module doc)."""
    steps = [r for r in log if "step" in r]
    quarter = max(len(steps) // 4, 1)

    def mean(rows, key):
        vals = [r[key] for r in rows if key in r]
        return sum(vals) / len(vals) if vals else None

    return {
        "no_signal_frac": sum(bool(r.get("skipped")) or r.get("rl_loss") == 0.0 for r in steps)
        / len(steps),
        "reward_first_quarter": mean(steps[:quarter], "reward"),
        "reward_last_quarter": mean(steps[-quarter:], "reward"),
        "sampled_nll_first_quarter": mean(steps[:quarter], "sampled_nll"),
        "sampled_nll_last_quarter": mean(steps[-quarter:], "sampled_nll"),
        "ratio_max": max((r["ratio_max"] for r in steps if "ratio_max" in r), default=None),
        "clip_frac_mean": mean(steps, "clip_frac"),
        "logprob_gap_max": max(
            (r["logprob_gap_max"] for r in steps if "logprob_gap_max" in r), default=None
        ),
        "heldout_curve": [
            (r["episodes"], r["heldout_success"]) for r in log if "heldout_success" in r
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--summarize", action="store_true", help="run nothing: evaluate and summarize what finished"
    )
    parser.add_argument("--final-episodes", type=int, default=240)
    parser.add_argument("--config", default=str(ROOT / "configs/toolgrid.toml"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/toolgrid_rl_sweep.json"))
    args = parser.parse_args()
    base = load_config(args.config)
    runs = Path(base.out_dir) / "rl-sweep"
    runs.mkdir(parents=True, exist_ok=True)
    warm, _ = cached_warm_start(base, Path(base.out_dir) / "warm-starts")
    torch.save(warm.state_dict(), runs / "warm_start.pt")
    state = warm.state_dict()
    configs = sweep_configs(base)
    jobs = []
    seeds_of = {n: [*args.seeds, *CONFIRM.get(n, ())] for n in configs}
    for name, cfg in {} if args.summarize else configs.items():
        for seed in seeds_of[name]:
            run_dir = runs / run_dir_name(name, seed)
            cfg_s = replace(cfg, seed=seed, out_dir=str(run_dir))
            saved = run_dir / "config.json"
            fresh = json.loads(json.dumps(asdict(cfg_s)))
            finished = (run_dir / "log.jsonl").is_file() and saved.is_file()
            if finished and json.loads(saved.read_text()) == fresh:
                continue
            run_dir.mkdir(parents=True, exist_ok=True)
            (run_dir / "log.jsonl").unlink(missing_ok=True)
            for stale in run_dir.glob("final_eval_*.json"):
                stale.unlink()
            saved.write_text(json.dumps(fresh, indent=2) + "\n")
            jobs.append((name, seed, cfg_s, state))
    t0 = time.perf_counter()
    seconds = []
    if jobs:
        with mp.get_context("spawn").Pool(args.workers) as pool:
            for name, seed, s in pool.imap_unordered(_run, jobs):
                seconds.append(s)
                print(f"done {name} seed {seed} in {s:.0f}s", flush=True)
    done = [
        n
        for n in configs
        if all((runs / run_dir_name(n, seed) / "log.jsonl").is_file() for seed in seeds_of[n])
    ]
    final = final_evaluation(base, done, args.seeds, runs, args.final_episodes, args.workers)
    settings = {}
    for name in done:
        seeds = seeds_of[name]
        if seeds != args.seeds:  # its own final evaluation, the warm start's on those seeds
            own = final_evaluation(base, [name], seeds, runs, args.final_episodes, args.workers)
            arm, warm_success = own["arms"][name], own["arms"][WARM_START]["success"]
        else:
            arm, warm_success = final["arms"][name], final["arms"][WARM_START]["success"]
        mean, lo, hi = paired_bootstrap([arm["success"][s] - warm_success[s] for s in seeds])
        logs = {
            s: [
                json.loads(line)
                for line in (runs / run_dir_name(name, s) / "log.jsonl").read_text().splitlines()
            ]
            for s in seeds
        }
        settings[name] = {
            "changes": SETTINGS[name],
            "seeds": seeds,
            "final_success": arm["success"],
            "final_success_mean": arm["success_mean"],
            "final_error_rate": arm["error_rate"],
            "final_calls_per_episode": arm["calls_per_episode"],
            "diff_vs_warm_start": {"mean": mean, "ci95": [lo, hi]},
            "warm_start_success": warm_success,
            "diff_vs_configured_rl": final["arms"].get(name, {}).get("success_diff_vs_rl"),
            "diagnostics": {s: diagnostics(log) for s, log in logs.items()},
        }
    summary = {
        "what": "RL only from the experiment's warm start, the RL step's settings varied",
        "config": "configs/toolgrid.toml (RL-only arm), [rl] and [loss] changed as changes says",
        "episodes_per_run": {
            n: c.rl.steps * c.rl.tasks_per_step * c.rl.group_size for n, c in configs.items()
        },
        "incomplete": [n for n in configs if n not in done],
        "seeds": args.seeds,
        "final_episodes": args.final_episodes,
        "warm_start": {
            "success": final["arms"][WARM_START]["success"],
            "success_mean": final["arms"][WARM_START]["success_mean"],
            "error_rate": final["arms"][WARM_START]["error_rate"],
        },
        "settings": settings,
        "run_seconds_median": sorted(seconds)[len(seconds) // 2] if seconds else None,
        "runs_this_invocation": len(jobs),
        "total_seconds": round(time.perf_counter() - t0, 1),
    }
    Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    for name, s in settings.items():
        d = s["diff_vs_warm_start"]
        print(
            f"{name:36s} {s['final_success_mean']:.3f}  vs warm start {d['mean']:+.3f} "
            f"[{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]"
        )


if __name__ == "__main__":
    main()

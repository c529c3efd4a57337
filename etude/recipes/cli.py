"""`etude rl`: train from a TOML config (dispatching on its `env` field) or run an experiment."""

from __future__ import annotations

import argparse

from etude.config import read_toml

ENVS = ("toolgrid", "coding")


def run_config(path: str, resume: bool = False) -> int:
    """Train with the config at `path`; its `env` field picks the environment. `resume`
    (the coding env only) continues from the checkpoint in the config's out_dir."""
    data = read_toml(path)  # each env's parse_config reads the rest through etude.config
    env = data.get("env")
    if resume and env != "coding":
        raise ValueError(f"--resume is supported for env = 'coding' only, not {env!r}")
    if env == "toolgrid":
        from etude.recipes.toolgrid.train import parse_config, train

        cfg = parse_config(data)
        records = train(cfg)
        last = [r for r in records if "heldout_success" in r][-1]
        print(
            f"held-out success {last['heldout_success']:.2f}, targeted error rate "
            f"{last['heldout_error_rate']:.3f}; log, plots and policy in {cfg.out_dir}"
        )
        return 0
    if env == "coding":
        from etude.recipes.coding.loop import main as coding_loop

        return coding_loop(data, resume=resume)
    raise ValueError(f"{path}: unknown env {env!r}; known: {', '.join(ENVS)}")


def main(args: argparse.Namespace) -> int:
    if args.config and args.experiment:
        raise ValueError("give either --config FILE or `experiment NAME`, not both")
    if args.experiment:
        if args.experiment != ["experiment", "toolgrid"]:
            raise ValueError(
                f"unknown rl command {' '.join(args.experiment)!r}; try `experiment toolgrid`"
            )
        from etude.recipes.toolgrid.experiment import main as experiment

        return experiment(
            args.out,
            quick=args.quick,
            require_hint_reading=not getattr(args, "ignore_hint_check", False),
        )
    if not args.config:
        raise ValueError("give --config FILE (for example configs/toolgrid.toml)")
    return run_config(args.config, resume=getattr(args, "resume", False))

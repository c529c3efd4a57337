"""Which update raises the episodes that beat their task's mean? A coding-loop run's first
batch (iteration 1: sampled by the warm start, `model.init`) replayed from the warm start's
weights and a fresh optimizer — as the loop builds both at its start — once per variant of
the update's settings, each measured as `coding_rl_train_tasks.py` measures a run's
updates (`logprob_shift`: per episode, the mean over its sampled tokens of
log pi_after - log pi_sampler, by the sign of the episode's advantage).

The variant `as_run` is the run's own `loss` settings: its shifts must equal those the run
recorded after its first update (`iter_0001/logprob_shift.json`; the largest difference is
stored as `as_run_max_difference`), which checks that the replay is the loop's update.
Each `--variant NAME:FIELD=VALUE[,FIELD=VALUE]` overrides fields of the update's settings
(`etude.rl.update.StepSettings`: `aggregation`, `negative_weight`, `passes`, `ref_kl`, ...).
Runs with hint categories weighted are refused: the replay passes no hints (run them with
`--no-hints`).

    .venv/bin/python benchmarks/update_replay.py --run runs/i16q/rl \\
        --variant sequence:aggregation=sequence --variant winners_only:negative_weight=0 \\
        --key s26_six_tasks_iter1

Writes benchmarks/results/update_replay.json: {"<key>": {"run", "warm_start", "episodes",
"groups", "groups_with_spread", "run_settings", "variants": {"<name>": {"overrides",
"logprob_shift": {"per_episode", "mean", "sequence_mean"}, "seconds"}},
"as_run_max_difference"}}.
Resumable: variants already stored under the key are not run again.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import MISSING, fields, replace
from pathlib import Path

import torch
from coding_rl_train_tasks import SHIFT, episode_shifts
from results_file import store

RESULT = Path(__file__).parent / "results" / "update_replay.json"


def parse_variant(text: str) -> tuple[str, dict]:
    """`NAME:FIELD=VALUE,...` -> (name, {field: value}), each value typed as the
    StepSettings field's default is."""
    from etude.rl.update import StepSettings

    name, sep, body = text.partition(":")
    if not name or not sep or not body:
        raise SystemExit(f"--variant {text!r}: expected NAME:FIELD=VALUE[,FIELD=VALUE]")
    defaults = {f.name: f.default for f in fields(StepSettings) if f.default is not MISSING}
    overrides = {}
    for pair in body.split(","):
        key, eq, value = pair.partition("=")
        if not eq or key not in defaults:
            raise SystemExit(f"--variant {text!r}: {key!r} is not a scalar StepSettings field")
        kind = type(defaults[key])
        if kind is bool:
            raise SystemExit(f"--variant {text!r}: {key!r} is a flag; not replayable here")
        try:
            overrides[key] = kind(value) if defaults[key] is not None else float(value)
        except ValueError as err:
            wrong = f"{key}={value!r} is not a {kind.__name__}"
            raise SystemExit(f"--variant {text!r}: {wrong}") from err
    return name, overrides


def main() -> None:
    from etude.recipes.coding.checkpoint import load_weights
    from etude.recipes.coding.config import parse_config
    from etude.recipes.coding.loop import (
        build_optimizer,
        policy_step,
        reward_spread,
        update_settings,
    )
    from etude.rl.trajectory import Trajectory
    from etude.serving.hf_model import load_smollm2

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a coding-loop run directory (out_dir)")
    parser.add_argument("--variant", action="append", default=[], help="NAME:FIELD=VALUE,...")
    parser.add_argument("--key", required=True, help="store the measurement under this key")
    args = parser.parse_args()
    variants = [("as_run", {})] + [parse_variant(v) for v in args.variant]
    names = [n for n, _ in variants]
    if len(set(names)) != len(names):
        raise SystemExit(f"--variant names must differ from each other and 'as_run': {names}")
    run = Path(args.run)
    config, first = run / "checkpoint" / "run_config.json", run / "iter_0001"
    for path in (config, first / "graded.jsonl", first / SHIFT):
        if not path.is_file():
            raise SystemExit(f"--run {run}: {path} is missing")
    cfg = parse_config({"env": "coding", **json.loads(config.read_text())})
    if not cfg.model.init:
        raise SystemExit(f"--run {run} has no warm start (model.init) to replay from")
    settings = update_settings(cfg)
    if settings.uses_any():
        raise SystemExit(f"--run {run} weighs hint categories; replay runs without hints only")

    records = [json.loads(x) for x in (first / "graded.jsonl").read_text().splitlines() if x]
    # the loop's (trajectory, group, hints) triples: one group per task, no hints
    trained = [(Trajectory.from_dict(r), r["group"], []) for r in records]
    recorded = json.loads((first / SHIFT).read_text())
    stored = json.loads(RESULT.read_text()).get(args.key, {}) if RESULT.is_file() else {}
    result = {
        "run": str(run),
        "warm_start": cfg.model.init,
        "episodes": len(records),
        **reward_spread(records),
        "run_settings": {
            k: getattr(settings, k) for k in ("aggregation", "negative_weight", "passes", "ref_kl")
        },
        "variants": stored.get("variants", {}),
        "as_run_max_difference": stored.get("as_run_max_difference"),
    }
    reference = None
    for name, overrides in variants:
        if name in result["variants"]:
            print(f"{name}: stored, not run again")
            continue
        start = time.perf_counter()
        torch.manual_seed(cfg.seed)
        model, tok = load_smollm2()
        load_weights(Path(cfg.model.init), model)
        step = replace(settings, **overrides)
        if step.ref_kl and reference is None:
            reference, _ = load_smollm2()
            load_weights(Path(cfg.model.init), reference)
            reference.requires_grad_(False).eval()
        optimizer = build_optimizer(model, cfg)
        policy_step(model, optimizer, tok, trained, step, reference if step.ref_kl else None)
        shift = episode_shifts(model, tok, records, cfg.loss.max_tokens)
        result["variants"][name] = {
            "overrides": overrides,
            "logprob_shift": shift,
            "seconds": round(time.perf_counter() - start, 1),
        }
        if name == "as_run":
            result["as_run_max_difference"] = max(
                abs(a - b)
                for sign, values in recorded["per_episode"].items()
                for a, b in zip(values, shift["per_episode"][sign], strict=True)
            )
        store(RESULT, "update_replay", args.key, result)
        print(name, json.dumps(shift["mean"]), json.dumps(shift["sequence_mean"]), flush=True)
        del model, optimizer


if __name__ == "__main__":
    main()

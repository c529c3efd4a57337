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

`--fork NAME=OUT` (repeatable) also writes, from variant NAME, the run as it would have been had its
first update been that variant: `OUT/tasks` (the run's tasks) and `OUT/rl` (its
`iter_0001` with the variant's `logprob_shift.json`, the metrics line the loop would have
written, and a checkpoint of iteration 1 holding the variant's weights and optimizer state,
the run's RNG states and its config with the variant's `loss` fields). So two updates are
compared on the same first batch: `coding_rl_train_tasks.py --out OUT` with the variant's
settings and more `--iterations` resumes the fork, and the run itself resumes as before.
The run's checkpoint must still be that of iteration 1, where the RNG states are those
after the first update. The fork of `as_run` holds the run's own checkpoint (the same
weights and optimizer state).

    .venv/bin/python benchmarks/update_replay.py --run runs/i16q/rl \\
        --variant sequence:aggregation=sequence --variant winners_only:negative_weight=0 \\
        --key s26_six_tasks_iter1
    .venv/bin/python benchmarks/update_replay.py --run runs/i16q/rl \\
        --variant winners_only:negative_weight=0 --fork winners_only=runs/i16r \\
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
import shutil
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


def write_fork(
    out: Path, run: Path, cfg, overrides: dict, records: list[dict], model, tok, optimizer, replay
):
    """The run in `run` (its first batch's graded `records`) continued by the replayed
    variant (`overrides` of `cfg.loss`, `model` and `optimizer` after its update, `replay` =
    {"step", "shift", "seconds"}) as a loop run directory `out/rl` (its tasks in
    `out/tasks`) at iteration 1. Built in `out.partial` and renamed: `out` is whole or
    absent."""
    from etude.recipes.coding.checkpoint import read_state, restore_rng, save_checkpoint
    from etude.recipes.coding.loop import summarize
    from etude.recipes.coding.report import write_report
    from etude.rl.trajectory import JsonlWriter

    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    rl, first = staging / "rl", run / "iter_0001"
    shutil.copytree(cfg.tasks.tasks_dir, staging / "tasks")
    shutil.copytree(first, rl / "iter_0001")
    (rl / "iter_0001" / SHIFT).write_text(json.dumps(replay["shift"]) + "\n")
    forked = replace(  # the paths it will have once renamed
        cfg,
        out_dir=str(out / "rl"),
        tasks=replace(cfg.tasks, tasks_dir=str(out / "tasks")),
        loss=replace(cfg.loss, **overrides),
    )
    ran = read_state(run / "checkpoint")
    times = {k: ran["metrics"]["seconds"][k] for k in ("rollout", "grading", "monitoring")}
    training = {"training": replay["seconds"]}
    summary = summarize(1, records, replay["step"], times | training, bool(cfg.judge.base_url))
    summary |= {"policy_version": ran["metrics"]["policy_version"]}
    # the states the run's RNGs had after its first update, as its checkpoint holds them
    saved = torch.load(run / "checkpoint" / "optimizer.pt", weights_only=True, map_location="cpu")
    restore_rng(saved["torch_rng"], ran["python_rng"])
    start = time.perf_counter()
    save_checkpoint(rl / "checkpoint", model, tok, optimizer, forked, 1, summary)
    summary["seconds"]["checkpoint"] = round(time.perf_counter() - start, 2)
    JsonlWriter(rl / "metrics.jsonl").write(summary)
    write_report(rl)
    staging.rename(out)


def main() -> None:
    from etude.recipes.coding.checkpoint import load_weights, read_state
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
    parser.add_argument(
        "--fork",
        action="append",
        default=[],
        metavar="NAME=OUT",
        help="write the run continued by variant NAME into OUT",
    )
    parser.add_argument("--key", required=True, help="store the measurement under this key")
    args = parser.parse_args()
    variants = [("as_run", {})] + [parse_variant(v) for v in args.variant]
    names = [n for n, _ in variants]
    if len(set(names)) != len(names):
        raise SystemExit(f"--variant names must differ from each other and 'as_run': {names}")
    forks = dict(text.partition("=")[::2] for text in args.fork)
    for text in args.fork:
        name, _, out = text.partition("=")
        if name not in names or not out:
            raise SystemExit(f"--fork {text!r}: expected NAME=OUT with NAME one of {names}")
        if Path(out).exists():
            raise SystemExit(f"--fork {text!r}: {out} already exists; a fork is written anew")
    run = Path(args.run)
    config, first = run / "checkpoint" / "run_config.json", run / "iter_0001"
    for path in (config, first / "graded.jsonl", first / SHIFT):
        if not path.is_file():
            raise SystemExit(f"--run {run}: {path} is missing")
    cfg = parse_config({"env": "coding", **json.loads(config.read_text())})
    if not cfg.model.init:
        raise SystemExit(f"--run {run} has no warm start (model.init) to replay from")
    settings = update_settings(cfg)
    if forks:
        iteration = read_state(run / "checkpoint")["iteration"]
        if iteration != 1:
            why = "its RNG states are no longer those after the first update"
            raise SystemExit(f"--fork: {run}'s checkpoint is of iteration {iteration}: {why}")
        loss_fields = {f.name for f in fields(cfg.loss)}
        unknown = [k for n, o in variants if n in forks for k in o if k not in loss_fields]
        if unknown:
            raise SystemExit(f"--fork: {unknown} are not settings of the loop's loss section")
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
        if name in result["variants"] and name not in forks:
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
        step_start = time.perf_counter()
        metrics = policy_step(
            model, optimizer, tok, trained, step, reference if step.ref_kl else None
        )
        step_seconds = time.perf_counter() - step_start
        shift = episode_shifts(model, tok, records, cfg.loss.max_tokens)
        result["variants"][name] = {
            "overrides": overrides,
            "logprob_shift": shift,
            "seconds": round(time.perf_counter() - start, 1),
        }
        if name in forks:
            replay = {"step": metrics, "shift": shift, "seconds": step_seconds}
            write_fork(
                Path(forks[name]), run, cfg, overrides, records, model, tok, optimizer, replay
            )
            print(f"{name}: forked into {forks[name]}")
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

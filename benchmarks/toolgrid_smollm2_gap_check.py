"""Does SmolLM2-135M-Instruct read ToolGrid's hints once it knows the tool-call format? The
pre-flight gap check (`etude.recipes.toolgrid.hint_reading`) on the model after a short
supervised warm start on the environment's demonstrations (configs/toolgrid-smollm2.toml:
episodes in SmolLM2's chat template, calls as `<tool_call>{...}</tool_call>` text; sampling
batched over episodes in one KV cache), and optionally (`--before`) on the model as it comes.

    nice -n 10 .venv/bin/python benchmarks/toolgrid_smollm2_gap_check.py [--device cuda]
        [--steps N] [--batch N] [--lr X] [--tasks 300] [--episodes 100] [--before]
        [--threads 2] [--state runs/toolgrid-smollm2-check]
        -> benchmarks/results/toolgrid_smollm2_gap_check.json
    bash benchmarks/toolgrid_smollm2_h200.sh     # the full sizes on one H200

Phases, each timed (wall and CPU seconds) and written to the JSON as it ends: the model's
load, the warm start (its state dict saved under `--state`), the log-prob half on `--tasks`
held-out tasks, the success half on `--episodes` unhinted + as many hinted episodes. A rerun
with the same settings reuses the saved warm start and every phase already in the JSON, so
an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from etude.recipes.toolgrid.hint_reading import (
    hint_reading,
    hinted_success,
    predicted_benefit,
    predicts_benefit,
)
from etude.recipes.toolgrid.train import load_config, new_policy, warm_started_policy

RESULTS = Path(__file__).parent / "results"


class Timer:
    """Wall and CPU seconds of a block."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.seconds = {
            "wall_s": round(time.perf_counter() - self.wall, 1),
            "cpu_s": round(time.process_time() - self.cpu, 1),
        }


def check(policy, cfg, tasks: int, episodes: int, out: dict, key: str, write) -> None:
    """Both halves of the gap check into `out[key]`, each phase kept once it is done."""
    done = out.setdefault(key, {})
    if done.get("tasks") != tasks:
        with Timer() as t:
            done.update(hint_reading(policy, cfg, tasks))
        done["logprob_half_time"] = t.seconds
        done.pop("success", None)
        write()
    if done.get("success", {}).get("episodes") != episodes:
        with Timer() as t:
            done["success"] = hinted_success(policy, cfg, episodes)
        done["success"]["time"] = t.seconds
        write()
    done["prediction"] = predicted_benefit(done)
    done["predicts_benefit"] = predicts_benefit(done)
    print(f"{key}: {done['prediction']}", flush=True)
    write()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/toolgrid-smollm2.toml")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, help="warm-start steps (default: the config's)")
    parser.add_argument("--batch", type=int, help="demonstrations per step (the config's)")
    parser.add_argument("--lr", type=float, help="warm-start learning rate (the config's)")
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--before", action="store_true", help="also check the model as it comes")
    parser.add_argument("--threads", type=int, help="torch CPU threads")
    parser.add_argument("--state", default="runs/toolgrid-smollm2-check")
    parser.add_argument("--out", default=str(RESULTS / "toolgrid_smollm2_gap_check.json"))
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = load_config(args.config)
    ws = cfg.warm_start
    ws = replace(
        ws,
        steps=ws.steps if args.steps is None else args.steps,
        batch=ws.batch if args.batch is None else args.batch,
        lr=ws.lr if args.lr is None else args.lr,
    )
    cfg = replace(cfg, warm_start=ws)
    settings = {"config": args.config, "warm_start": asdict(ws), "device": args.device}
    out_path = Path(args.out)
    out = json.loads(out_path.read_text()) if out_path.exists() else {}
    if out.get("settings") != settings:
        out = {"settings": settings, "pretrained": cfg.model.pretrained}

    def write() -> None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        partial = out_path.with_suffix(".json.partial")
        partial.write_text(json.dumps(out, indent=2) + "\n")
        partial.replace(out_path)

    with Timer() as t:
        policy = new_policy(cfg.model).to(args.device)
    out["load_time"] = t.seconds
    if args.before:
        check(policy, cfg, args.tasks, args.episodes, out, "before_warm_start", write)
    state = Path(args.state) / "warm_start.pt"
    warm = out.get("warm_start", {})
    if warm.get("settings") == asdict(ws) and state.exists():
        policy.load_state_dict(torch.load(state, map_location=args.device))
    else:
        losses: list[float] = []

        def log(step: int, loss: float, _policy) -> None:
            losses.append(loss)
            print(f"warm-start step {step}: loss {loss:.4f}", flush=True)

        train, _ = cfg.toolgrid.registries()
        with Timer() as t:
            policy = warm_started_policy(cfg, train, log, args.device, policy=policy)
        state.parent.mkdir(parents=True, exist_ok=True)
        torch.save(policy.state_dict(), state)
        tenth = max(len(losses) // 10, 1)
        out["warm_start"] = {
            "settings": asdict(ws),
            "demonstrations": ws.steps * ws.batch,
            "time": t.seconds,
            "losses": [round(x, 4) for x in losses],
            "loss_first_tenth_median": statistics.median(losses[:tenth]) if losses else None,
            "loss_last_tenth_median": statistics.median(losses[-tenth:]) if losses else None,
        }
        out.pop("after_warm_start", None)
        write()
    policy.eval()
    check(policy, cfg, args.tasks, args.episodes, out, "after_warm_start", write)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does SmolLM2-135M-Instruct read ToolGrid's hints once it knows the tool-call format? The
pre-flight gap check (`etude.recipes.toolgrid.hint_reading`) on the model after a short
supervised warm start on the environment's demonstrations (configs/toolgrid-smollm2.toml:
episodes in SmolLM2's chat template, calls as `<tool_call>{...}</tool_call>` text; sampling
batched over episodes in one KV cache), and optionally (`--before`) on the model as it comes;
with `--mistake-episodes N`, also the check after the student's own mistakes
(`hint_reading.after_mistake`) on up to N unhinted held-out episodes, under "after_mistake".

    nice -n 10 .venv/bin/python benchmarks/toolgrid_smollm2_gap_check.py [--device cuda]
        [--steps N] [--batch N] [--lr X] [--tasks 300] [--episodes 100] [--before]
        [--threads 2] [--state runs/toolgrid-smollm2-check]
        [--mistake-episodes 128] [--mistake-states 40] [--chunk 32]
        -> benchmarks/results/toolgrid_smollm2_gap_check.json
    bash benchmarks/toolgrid_smollm2_h200.sh     # the full sizes on one H200

Phases, each timed (wall and CPU seconds) and written to the JSON as it ends: the model's
load, the warm start (its state dict saved under `--state`), the log-prob half on `--tasks`
held-out tasks, the success half on `--episodes` unhinted + as many hinted episodes. A rerun
with the same settings reuses the saved warm start and every phase already in the JSON, so
an interrupted run resumes where it stopped.

The after-mistake phases (each timed, cumulatively over resumes): sampling unhinted episodes
`--chunk` at a time until `--mistake-states` states where a detector fires are found or
`--mistake-episodes` are played; teacher-forced log-probs at every state; the three paired
continuations of every state. The sampled turns, scores and rewards are kept under
`--state` (after_mistake.json) after every chunk, so this too resumes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from etude.envs.toolgrid import Episode
from etude.recipes.toolgrid.hint_reading import (
    hint_reading,
    hinted_success,
    mistake_continuations,
    mistake_logprobs,
    mistake_report,
    mistake_states,
    mistake_tasks,
    predicted_benefit,
    predicts_benefit,
    replay,
    sampling_report,
)
from etude.recipes.toolgrid.train import (
    chat_tokenizer,
    load_config,
    new_policy,
    play,
    warm_started_policy,
)
from etude.rl.feedback import DETECTORS

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


def after_mistake_phases(policy, cfg, args, out: dict, write) -> None:
    """`hint_reading.after_mistake` in resumable chunks into `out["after_mistake"]` (its
    result, the settings and each phase's time), the work kept in `--state`."""
    settings = {
        "max_episodes": args.mistake_episodes,
        "target_states": args.mistake_states,
        "chunk": args.chunk,
        "detectors": cfg.feedback.detectors,
    }
    path = Path(args.state) / "after_mistake.json"
    work = json.loads(path.read_text()) if path.exists() else {}
    # episode k plays the same whatever the chunk or the limits (a stream of tasks and
    # seeds, one generator per episode), so only the detectors and the warm start key the work
    key = {"detectors": cfg.feedback.detectors, "warm_start": out["warm_start"]}
    if work.get("key") != key:
        work = {"key": key, "turns": []}
        work |= {"scores": [], "rewards": [], "times": {}}

    def save() -> None:
        tmp = path.with_suffix(".json.partial")
        tmp.write_text(json.dumps(work) + "\n")
        tmp.replace(path)

    def timed(phase: str, seconds: dict) -> None:
        total = work["times"].setdefault(phase, {"wall_s": 0.0, "cpu_s": 0.0})
        for k, v in seconds.items():
            total[k] = round(total[k] + v, 1)

    detectors = [DETECTORS[d]() for d in cfg.feedback.detectors]
    tasks, seeds = mistake_tasks(cfg, args.mistake_episodes)
    tok = chat_tokenizer(cfg.model)
    slack = cfg.toolgrid.slack

    def episodes() -> list[Episode]:
        return [replay(t, slack, turns) for t, turns in zip(tasks, work["turns"], strict=False)]

    while len(work["turns"]) < args.mistake_episodes:
        if len(mistake_states(episodes(), detectors)) >= args.mistake_states:
            break
        at = len(work["turns"])
        chunk = [Episode(t, slack) for t in tasks[at : at + args.chunk]]
        with Timer() as t:
            play(policy, tok, chunk, seeds[at : at + args.chunk], cfg)
        timed("sampling", t.seconds)
        work["turns"] += [[m for m in ep.messages if m["role"] == "assistant"] for ep in chunk]
        save()
        print(f"after-mistake sampling: {len(work['turns'])} episodes", flush=True)
    played = episodes()
    states = mistake_states(played, detectors)
    print(f"after-mistake: {len(states)} states in {len(played)} episodes", flush=True)
    # the sampling's own figures go to the JSON at once, marked unfinished until the rest is
    out["after_mistake"] = {"settings": settings, "finished": False}
    out["after_mistake"] |= {**sampling_report(played, states), "time": work["times"]}
    write()
    for phase, key, fn in (
        ("logprobs", "scores", lambda s: mistake_logprobs(policy, cfg, s)),
        ("continuations", "rewards", lambda s: mistake_continuations(policy, cfg, s)),
    ):
        while len(work[key]) < len(states):
            at = len(work[key])
            with Timer() as t:
                work[key] += fn(states[at : at + args.chunk])
            timed(phase, t.seconds)
            save()
            print(f"after-mistake {phase}: {len(work[key])} of {len(states)}", flush=True)
    scores = [{k: tuple(v) for k, v in row.items()} for row in work["scores"]]
    out["after_mistake"] = {
        "settings": settings,
        "finished": True,
        **mistake_report(played, states, scores, work["rewards"]),
        "time": work["times"],
    }
    done = out["after_warm_start"]
    with_targeted = {**done, "after_mistake": out["after_mistake"]}
    out["after_mistake"]["prediction"] = predicted_benefit(with_targeted)
    out["after_mistake"]["predicts_benefit"] = predicts_benefit(with_targeted)
    print(f"after_mistake: {out['after_mistake']['prediction']}", flush=True)
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
    parser.add_argument(
        "--mistake-episodes", type=int, default=0, help="the after-mistake check's episodes"
    )
    parser.add_argument("--mistake-states", type=int, default=40, help="stop sampling at")
    parser.add_argument("--chunk", type=int, default=32, help="episodes / states per chunk")
    parser.add_argument("--out", default=str(RESULTS / "toolgrid_smollm2_gap_check.json"))
    args = parser.parse_args()
    for name in ("mistake_episodes", "mistake_states", "chunk"):
        if getattr(args, name) < (0 if name == "mistake_episodes" else 1):
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
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
    cfg = replace(cfg, warm_start=ws, model=replace(cfg.model, device=args.device))
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
        policy = new_policy(cfg.model)
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
            policy = warm_started_policy(cfg, train, log, policy=policy)
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
    if args.mistake_episodes:
        after_mistake_phases(policy, cfg, args, out, write)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

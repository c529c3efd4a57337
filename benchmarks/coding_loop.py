"""The coding loop's costs: time per iteration split into rollout, grading, monitoring,
training and checkpoint, and the loop's episodes per minute, for the default config
(configs/coding-smol.toml), as each iteration's summary records them; and episodes per
minute of rollouts alone with 1, 2 and 4 concurrent sandboxes, side by side in one run.

Throughput is measured twice: with a scripted policy (the same five tool calls every
episode: list, read, search, edit, run the tests; no model) it is the environment's own
rate (workspace copy, per-episode venv, sandboxed tools); with the local SmolLM2 policy it
is what the loop sees. Ratios are of medians against concurrency 1. SmolLM2 seldom changes
a workspace, so the loop's grading time is often 0 (unchanged workspaces are not graded);
`grading_seconds_changed_workspace` is the grader on a workspace with the reference
restored, the cost every changed workspace pays.

    .venv/bin/python benchmarks/coding_loop.py          # writes benchmarks/results/coding_loop.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
import tomllib
from pathlib import Path

import torch

from etude.envs.coding import Budget, EnvSettings
from etude.envs.rollouts import Job, run_rollouts
from etude.recipes.coding.config import parse_config
from etude.recipes.coding.loop import find_tasks, train
from etude.serving.backends import HFBackend
from etude.synth.grade import grade, solved_workspace
from etude.synth.task import load_task

ROOT = Path(__file__).resolve().parents[1]
# what each iteration's summary says about cost and behaviour (docs/coding-loop.md)
ITERATION_KEYS = (
    "iteration",
    "seconds",
    "episodes_per_minute",
    "episodes",
    "ends",
    "reward_mean",
    "tool_call_rate",
    "tool_errors",
    "turns_mean",
    "tokens_mean",
    "trained_tokens",
    "ratios",
    "hints_by_category",
    "kl",
)


def _call(name: str, **args) -> dict:
    fn = {"name": name, "arguments": json.dumps(args)}
    return {"id": f"c_{name}", "type": "function", "function": fn}


class ScriptedPolicy:
    """Five fixed tool calls, then an answer: the environment's cost without a model."""

    def __init__(self, source: str, test: str) -> None:
        self.turns = [
            _call("list_files"),
            _call("read_file", path=source),
            _call("search_files", pattern="def "),
            _call("write_file", path="scratch.py", content="X = 1\n"),
            _call("run_command", command=f"python -m pytest -q -x {test} || true"),
        ]

    def complete(self, messages, tools):
        done = sum(m["role"] == "assistant" for m in messages)
        if done < len(self.turns):
            return {"role": "assistant", "content": None, "tool_calls": [self.turns[done]]}, 0
        return {"role": "assistant", "content": "done"}, 0


def throughput(tasks, backend_for, episodes: int, repeats: int, budget: Budget, tmp: Path):
    """Episodes per minute at concurrency 1, 2, 4 (median of `repeats`)."""
    out = {}
    for concurrency in (1, 2, 4):
        rates, ends = [], {}
        for r in range(repeats):
            jobs = [
                Job(tasks[i % len(tasks)], tmp / f"c{concurrency}-r{r}" / f"e{i}", i)
                for i in range(episodes)
            ]
            start = time.perf_counter()
            done = run_rollouts(
                jobs,
                backend_for(tasks[0]),
                tmp / f"c{concurrency}-r{r}.jsonl",
                settings=EnvSettings(),
                budget=budget,
                concurrency=concurrency,
            )
            rates.append(episodes / ((time.perf_counter() - start) / 60))
            for _, e in done:
                ends[e.end] = ends.get(e.end, 0) + 1
        out[concurrency] = {
            "episodes_per_minute": statistics.median(rates),
            "runs": rates,
            "ends": ends,
        }
    base = out[1]["episodes_per_minute"]
    for entry in out.values():
        entry["ratio_to_1"] = entry["episodes_per_minute"] / base
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "coding-smol.toml"))
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--scripted-episodes", type=int, default=8)
    parser.add_argument("--model-episodes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "coding_loop.json"))
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="etude-bench-coding-"))
    data = tomllib.loads(Path(args.config).read_text())
    data |= {"out_dir": str(tmp / "run"), "iterations": args.iterations}
    cfg = parse_config(data)
    os.chdir(ROOT)  # the config's repository paths are relative to the repository
    summaries = [s for s in train(cfg) if s["iteration"] > 0]
    iteration = [{k: s[k] for k in ITERATION_KEYS} for s in summaries]

    from rich.console import Console

    tasks = find_tasks(cfg, Console(stderr=True))
    first = load_task(tasks[0])
    source = first["modified_files"][-1]
    test = first["tests"]["pass_to_pass"][0].split("::")[0]
    scripted = throughput(
        tasks,
        lambda _: ScriptedPolicy(source, test),
        args.scripted_episodes,
        args.repeats,
        Budget(max_turns=8),
        tmp / "scripted",
    )
    grading = []
    for r in range(args.repeats):
        solved = solved_workspace(tasks[0], tmp / f"solved-{r}")
        start = time.perf_counter()
        graded = grade(tasks[0], solved)
        grading.append(time.perf_counter() - start)
        if graded["binary"] != 1:
            raise RuntimeError(f"the reference solution did not pass: {graded}")
    from etude.serving.hf_model import load_smollm2

    model, tok = load_smollm2()
    backend = HFBackend(model, tok, max_new_tokens=cfg.model.max_new_tokens, temperature=0.8)
    model_rates = throughput(
        tasks,
        lambda _: backend,
        args.model_episodes,
        1,
        Budget(cfg.rollout.max_turns, cfg.rollout.max_tokens, cfg.rollout.wall_s),
        tmp / "model",
    )
    result = {
        "benchmark": "coding_loop",
        "config": str(Path(args.config).relative_to(ROOT)),
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(),
        },
        "iterations": iteration,
        "seconds_per_iteration_median": {
            k: statistics.median(s["seconds"][k] for s in iteration)
            for k in iteration[0]["seconds"]
        },
        "time_share_median": {
            k: statistics.median(s["seconds"][k] / sum(s["seconds"].values()) for s in iteration)
            for k in iteration[0]["seconds"]
        },
        "loop_episodes_per_minute_median": statistics.median(
            s["episodes_per_minute"] for s in iteration
        ),
        "grading_seconds_changed_workspace": {
            "median": statistics.median(grading),
            "runs": grading,
        },
        "episodes_per_minute": {
            "scripted_policy": {"episodes": args.scripted_episodes, "by_concurrency": scripted},
            "smollm2_policy": {"episodes": args.model_episodes, "by_concurrency": model_rates},
        },
        "note": "median of `repeats` runs per concurrency; ratio_to_1 is against concurrency 1",
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["seconds_per_iteration_median"]))
    print("loop episodes per minute:", result["loop_episodes_per_minute_median"])
    print("grading a changed workspace:", result["grading_seconds_changed_workspace"])
    for name, entry in result["episodes_per_minute"].items():
        rates = {c: round(v["episodes_per_minute"], 2) for c, v in entry["by_concurrency"].items()}
        print(name, rates)
    print(f"wrote {args.out}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

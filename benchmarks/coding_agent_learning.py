"""Does the coding agent learn? Curriculum -> demonstrations -> SFT warm start -> held-out
first-turn tool-call rate -> RL from the warm start in the coding loop, per seed.

For each seed: `etude.recipes.coding.curriculum.build_curriculum` (the example repository
and the sdists given, split train/held-out), `build_demonstrations` on the train split,
`etude.recipes.sft.train` (SmolLM2, the last `--train-layers` layers; with `--first-turns`
on each demonstration cut after its first accepted tool call; with `--then-whole-steps N`
that is followed by N steps on the whole demonstrations at `--then-whole-lr`, started from
the first SFT's checkpoint), then the share of
held-out first turns that call a known tool with valid JSON arguments holding the tool's
required keys (`--samples` per held-out task, temperature 0.8), then `--iterations` of the
coding loop started from the SFT checkpoint (`model.init`) on the train split, reading
each iteration's held-out mean reward from the loop's summary key `heldout_reward` (the
loop's held-out evaluation; this script stops with an error when the loop does not
report it, rather than estimate it itself). Iteration 0 of `heldout_reward` is the warm
start's: the loop evaluates the held-out tasks before its first update.

Resumable: every stage keeps its output under `--out` and is skipped when present.
Writes benchmarks/results/coding_agent_learning.json:
{"seeds": {"<seed>": {"heldout_tool_call_rate": r, "heldout_reward": [...], ...}}, ...};
with `--key NAME` the run's settings and seeds go under "NAME" instead (a variant beside
the main figures).

    nice -n 10 .venv/bin/python benchmarks/coding_agent_learning.py --seeds 0 \\
        --max-candidates 4 --per-task 2 --first-turns --sft-steps 10 --batch-size 3 \\
        --train-layers 2 --lr 0.02 --samples 4 --iterations 0
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

RESULT = Path(__file__).parent / "results" / "coding_agent_learning.json"


def tool_call_rate(model, tok, task_dirs: list[Path], samples: int, seed: int) -> dict:
    """Share of first turns on `task_dirs` that call a known tool with valid arguments."""
    import torch

    from etude.envs.coding import SYSTEM_PROMPT, TOOLS
    from etude.serving.backends import HFBackend
    from etude.synth.task import load_task

    required = {t["function"]["name"]: t["function"]["parameters"]["required"] for t in TOOLS}
    backend = HFBackend(model, tok, max_new_tokens=96, temperature=0.8)
    torch.manual_seed(seed)
    valid, total, names = 0, 0, {}
    for task_dir in task_dirs:
        prompt = load_task(task_dir)["problem_statement"]
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ]
        for _ in range(samples):
            message, _ = backend.complete(messages, TOOLS)
            total += 1
            calls = message.get("tool_calls") or []
            if not calls:
                continue
            name = calls[0]["function"]["name"]
            names[name] = names.get(name, 0) + 1
            try:
                args = json.loads(calls[0]["function"]["arguments"])
            except json.JSONDecodeError:
                continue
            if name in required and isinstance(args, dict) and set(required[name]) <= set(args):
                valid += 1
    return {"rate": valid / total if total else 0.0, "first_turns": total, "tools": names}


def run_seed(args, seed: int) -> dict:
    from etude.recipes.coding.curriculum import SplitRule, build_curriculum, split_dirs
    from etude.recipes.coding.demonstrations import build_demonstrations, first_turns
    from etude.recipes.sft import load_policy, parse_config, train

    root = Path(args.out) / f"seed-{seed}"
    curriculum = root / "curriculum"
    if not (curriculum / "curriculum.json").is_file():
        build_curriculum(
            curriculum,
            [Path(s).expanduser() for s in args.sdist],
            SplitRule(seed=seed, heldout_share=0.3),
            max_candidates=args.max_candidates,
        )
    train_dirs, heldout_dirs = split_dirs(curriculum, "train"), split_dirs(curriculum, "heldout")
    demos = root / "demonstrations.jsonl"
    start = time.perf_counter()
    made = build_demonstrations(train_dirs, demos, per_task=args.per_task, seed=seed)
    demo_s = time.perf_counter() - start
    if args.first_turns:  # train on how episodes open only (short sequences for a CPU)
        cut = root / "demonstrations.first_turns.jsonl"
        records = [json.loads(x) for x in demos.read_text().splitlines() if x.strip()]
        cut.write_text("".join(json.dumps(first_turns(r)) + "\n" for r in records))
        demos = cut
    sft_cfg = parse_config(
        {
            "seed": seed,
            "out_dir": str(root / "sft"),
            "data": [str(demos)],
            "steps": args.sft_steps,
            "batch_size": args.batch_size,
            "device": args.device,
            "optim": {"train_layers": args.train_layers, "lr": args.lr},
        }
    )
    done = (root / "sft" / "checkpoint" / "state.json").is_file()
    lines = train(sft_cfg, resume=done)
    metrics = [json.loads(x) for x in (root / "sft" / "metrics.jsonl").read_text().splitlines()]
    warm, whole = root / "sft", []
    if args.then_whole_steps:  # then the whole demonstrations, from the openings' weights
        warm = root / "sft-whole"
        whole_cfg = parse_config(
            {
                "seed": seed,
                "out_dir": str(warm),
                "data": [str(root / "demonstrations.jsonl")],
                "init": str(root / "sft" / "checkpoint"),
                "steps": args.then_whole_steps,
                "batch_size": args.batch_size,
                "device": args.device,
                "optim": {"train_layers": args.train_layers, "lr": args.then_whole_lr},
            }
        )
        lines += train(whole_cfg, resume=(warm / "checkpoint" / "state.json").is_file())
        whole = [json.loads(x) for x in (warm / "metrics.jsonl").read_text().splitlines()]
    model, tok = load_policy(str(warm / "checkpoint"))  # sampled on the CPU
    rate = tool_call_rate(model, tok, heldout_dirs, args.samples, seed)
    record = {
        "train_tasks": [d.name for d in train_dirs],
        "heldout_tasks": [d.name for d in heldout_dirs],
        "demonstrations": made,
        "demonstration_seconds": round(demo_s, 1),
        "sft_loss": [m["loss"] for m in metrics],
        "sft_tokens_per_s_median": statistics.median(m["tokens_per_s"] for m in metrics),
        "sft_steps_run_now": len(lines),
        "heldout_tool_call_rate": rate["rate"],
        "heldout_first_turns": rate["first_turns"],
        "heldout_first_tools": rate["tools"],
    }
    if whole:
        record["sft_whole_loss"] = [m["loss"] for m in whole]
        record["sft_whole_tokens_per_s_median"] = statistics.median(
            m["tokens_per_s"] for m in whole
        )
    if args.iterations:
        record["heldout_reward"] = run_rl(args, seed, root, warm, train_dirs, heldout_dirs)
    return record


def run_rl(
    args, seed: int, root: Path, warm: Path, train_dirs: list[Path], heldout_dirs: list[Path]
):
    """Held-out mean reward per iteration from the loop's summaries (see module doc)."""
    import tomllib

    from etude.recipes.coding.config import parse_config
    from etude.recipes.coding.loop import train

    data = tomllib.loads((Path(__file__).parents[1] / "configs" / "coding-smol.toml").read_text())
    rl = root / ("rl" if warm.name == "sft" else f"rl-{warm.name}")
    data |= {"seed": seed, "out_dir": str(rl), "iterations": args.iterations}
    data["tasks"] = {**data["tasks"], "tasks_dir": str(train_dirs[0].parent)}
    data["tasks"]["heldout_dir"] = str(heldout_dirs[0].parent)
    data["model"] = {**data["model"], "init": str(warm / "checkpoint")}
    try:
        cfg = parse_config(data)
    except ValueError as err:
        raise SystemExit(
            f"the coding loop does not take a held-out task directory ({err}); this benchmark "
            "needs the loop's held-out evaluation (tasks.heldout_dir, summary heldout_reward)"
        ) from err
    train(cfg, resume=(rl / "checkpoint").exists())
    summaries = [json.loads(x) for x in (rl / "metrics.jsonl").read_text().splitlines()]
    if any("heldout_reward" not in s for s in summaries):
        raise SystemExit("the loop's summaries have no heldout_reward: no figure is invented")
    return [s["heldout_reward"] for s in summaries]  # line 0: before the first update


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--sdist", nargs="*", default=[])
    parser.add_argument("--out", default="runs/coding-agent-learning")
    parser.add_argument("--max-candidates", type=int, default=4)
    parser.add_argument("--per-task", type=int, default=4)
    parser.add_argument("--sft-steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--train-layers", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.002, help="Muon's learning rate")
    parser.add_argument("--first-turns", action="store_true", help="SFT on episode openings")
    parser.add_argument("--then-whole-steps", type=int, default=0, help="then whole ones")
    parser.add_argument("--then-whole-lr", type=float, default=0.005)
    parser.add_argument("--key", default="", help="store the run under this key")
    parser.add_argument("--samples", type=int, default=4, help="first turns per held-out task")
    parser.add_argument("--iterations", type=int, default=0, help="RL iterations (0: none)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="SFT's")
    args = parser.parse_args()
    result = json.loads(RESULT.read_text()) if RESULT.is_file() else {"seeds": {}}
    result |= {
        "benchmark": "coding_agent_learning",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
    }
    settings = {k: v for k, v in vars(args).items() if k not in ("seeds", "key")}
    run = result.setdefault(args.key, {"seeds": {}}) if args.key else result
    run["settings"] = settings
    for seed in args.seeds:
        run["seeds"][str(seed)] = run_seed(args, seed)
        RESULT.parent.mkdir(parents=True, exist_ok=True)
        RESULT.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(run["seeds"][str(seed)], indent=2))


if __name__ == "__main__":
    main()

"""Which train tasks does a policy solve some of the time? Each task's episodes sampled
from one checkpoint, graded and screened by the monitor as the coding loop's held-out
evaluation does them (`etude.recipes.coding.loop.evaluate`: the same rollouts, budgets,
grader and monitor, no update), `--samples` episodes a task.

GRPO learns only from a group whose rewards differ; a task the policy never solves, or
always solves, gives its group no signal. This screen finds the tasks in between, for
`benchmarks/coding_rl_train_tasks.py --tasks`: at the end it prints the tasks whose
rewards differ between episodes ("with a spread") and those with some reward below 1.0
on average ("solved sometimes"). Held-out tasks are refused: choosing training tasks by
their held-out rewards would leak the evaluation into training. Each task is evaluated
in its own directory under `--out` and kept there, so a cut screen resumes at the first
task it has not finished.

    .venv/bin/python benchmarks/coding_task_screen.py --weights runs/i16i/sft/checkpoint \\
        --tasks runs/i16i/curriculum/train/* --samples 2 --out runs/i16m \\
        --turn-tokens 768 --episode-tokens 2048 --max-turns 8 --context 6015 \\
        --key s24_top_quick_train45x2

Writes benchmarks/results/coding_task_screen.json: {"<key>": {"settings": {...},
"tasks": {task: {"rewards", "graded_rewards", "zeroed_by", "ends", "seconds"}},
"with_spread": [task, ...], "solved_sometimes": [task, ...], "episodes", "reward_mean",
"seconds"}} (after every task: a cut screen keeps what it measured).
"""

from __future__ import annotations

import argparse
import statistics
import tomllib
from pathlib import Path

from coding_agent_learning import evaluate_weights, heldout_episodes
from results_file import store

RESULT = Path(__file__).parent / "results" / "coding_task_screen.json"
LOOP_CONFIG = Path(__file__).parents[1] / "configs" / "coding-smol.toml"


def task_record(it_dir: Path, summary: dict) -> dict:
    """One task's screened episodes (`it_dir`'s held-out records) in brief."""
    episodes = heldout_episodes(it_dir)
    return {
        "rewards": [e["reward"] for e in episodes],
        "graded_rewards": [e["graded_reward"] for e in episodes],
        "zeroed_by": [e["zeroed_by"] for e in episodes],
        "ends": [e["end"] for e in episodes],
        "seconds": round(summary["seconds"], 1),
    }


def chosen(tasks: dict[str, dict]) -> dict[str, list[str]]:
    """The tasks GRPO can learn from now (rewards that differ between episodes) and those
    solved on average some but not all of the time (a larger group may spread them)."""
    return {
        "with_spread": [t for t, r in tasks.items() if len(set(r["rewards"])) > 1],
        "solved_sometimes": [
            t for t, r in tasks.items() if 0.0 < statistics.mean(r["rewards"]) < 1.0
        ],
    }


def main() -> None:
    from etude.recipes.coding.config import parse_config
    from etude.recipes.coding.curriculum import HeldOutError, refuse_heldout

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", required=True, help="a checkpoint directory")
    parser.add_argument("--tasks", nargs="+", required=True, help="train task directories")
    parser.add_argument("--samples", type=int, default=2, help="episodes per task")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--turn-tokens", type=int, default=768)
    parser.add_argument("--episode-tokens", type=int, default=2048)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--context", type=int, default=6015)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--key", required=True, help="store the screen under this key")
    args = parser.parse_args()
    weights = Path(args.weights)
    if not (weights / "state.json").is_file():
        raise SystemExit(f"--weights {weights} is not a checkpoint directory (no state.json)")
    if args.samples < 1:
        raise SystemExit(f"--samples must be at least 1, got {args.samples}")
    tasks = sorted(Path(t) for t in args.tasks)
    for task in tasks:  # all checked before the first episode
        if not (task / "task.json").is_file():
            raise SystemExit(f"{task} is not a task directory (no task.json)")
    try:
        refuse_heldout(tasks)
    except HeldOutError as err:
        raise SystemExit(f"--tasks: {err}") from err

    data = tomllib.loads(LOOP_CONFIG.read_text())
    data |= {"seed": args.seed, "out_dir": args.out}
    data["tasks"] |= {
        "tasks_dir": str(tasks[0].parent),
        "heldout_dir": "",
        "heldout_samples": args.samples,
    }
    data["model"] |= {
        "init": str(weights),
        "max_new_tokens": args.turn_tokens,
        "max_context": args.context,
        "device": args.device,
    }
    data["rollout"] |= {"max_tokens": args.episode_tokens, "max_turns": args.max_turns}
    cfg = parse_config(data)

    settings = {k: v for k, v in vars(args).items() if k not in ("key", "tasks")}
    settings["tasks_given"] = len(tasks)
    screened: dict[str, dict] = {}
    for i, task in enumerate(tasks, 1):
        it_dir = Path(args.out) / task.name
        summary = evaluate_weights(cfg, weights, [task], it_dir)
        screened[task.name] = task_record(it_dir, summary)
        save(args.key, settings, screened)
        print(f"[{i}/{len(tasks)}] {task.name}: {screened[task.name]['rewards']}", flush=True)
    picked = chosen(screened)
    for name, names in picked.items():
        print(f"{name} ({len(names)}):", " ".join(str(tasks[0].parent / t) for t in names))


def save(key: str, settings: dict, screened: dict[str, dict]) -> None:
    """Store the screen so far under `key` of RESULT."""
    rewards = [x for r in screened.values() for x in r["rewards"]]
    run = {
        "settings": settings,
        "tasks": screened,
        **chosen(screened),
        "episodes": len(rewards),
        "reward_mean": round(statistics.mean(rewards), 4),
        "seconds": round(sum(r["seconds"] for r in screened.values()), 1),
    }
    store(RESULT, "coding_task_screen", key, run)


if __name__ == "__main__":
    main()

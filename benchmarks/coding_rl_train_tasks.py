"""Does RL raise reward on the tasks it trains on? The coding loop from a warm start on a
fixed handful of train tasks, every one of them in every iteration, with no held-out
evaluation, so that each iteration's rewards are measured on the same tasks: iteration k's
rollouts are sampled by the policy after k - 1 updates (iteration 1's by the warm start).

`benchmarks/coding_agent_learning.py` draws new train tasks each iteration, so its train
rewards compare different tasks, and a task with no spread in its group (every episode 0)
gives every advantage 0. Here the tasks are chosen (`--tasks`, directories of a
curriculum's train split; a held-out task is refused) where the warm start's episodes
sometimes score, so GRPO has a signal from the first iteration. The loop is
`configs/coding-smol.toml` with `model.init` = `--warm-start`, `tasks.tasks_dir` = copies of
the tasks under `--out`, `rollout.tasks_per_iteration` = their number, and the budgets and
optimizer given here. With `--heldout DIR` (a curriculum's held-out split), the last weights
are then evaluated on those tasks as the loop evaluates held-out tasks (one episode each,
`configs/coding-smol.toml`'s `tasks.heldout_samples`): does what RL learnt on a few tasks
carry over? `--iterations 0 --heldout DIR` runs no RL and evaluates the warm start itself
the same way (in `OUT/heldout-warm-start/`): the baseline. After each update, how it moved
the policy on the episodes it trained on (`logprob_shift`): per episode, the mean over its
sampled tokens of log pi_after - log pi_sampler (the sampler is the policy before the
update: the loop's ratios are 1) and its sum (the episode's change of log-probability), by
the sign of the episode's advantage; a policy-gradient step should raise the episodes that
beat their task's mean and lower the others. `--passes` and `--aggregation` set the update's
`loss.passes` (optimizer steps per batch) and `loss.aggregation`, `--negative-weight` the
factor on negative advantages (`loss.negative_weight`), `--ref-kl` the weight of the KL
towards the warm start (`loss.ref_kl`); `--no-hints` weighs no hint category (plain GRPO, no
teacher pass). Resumable: a rerun with more `--iterations` continues the loop from its
checkpoint, and a held-out evaluation already run for the last iteration is reused.

    T=runs/i16g/curriculum/train
    .venv/bin/python benchmarks/coding_rl_train_tasks.py --warm-start runs/i16g/sft/checkpoint \\
        --tasks $T/inflection-0.5.1__inflection.ordinalize \\
        $T/example_repo__textkit.stats.Concordance.frequency+positions \\
        $T/more-itertools-10.5.0__more_itertools.more.split_before \\
        $T/more-itertools-10.5.0__more_itertools.more.intersperse \\
        --out runs/i16h --iterations 5 --group-size 4 --lr 0.01 --train-layers 4 \\
        --turn-tokens 768 --episode-tokens 2048 --max-turns 7 --context 6015 \\
        --heldout runs/i16g/curriculum/heldout --key top_lr0.01

Writes benchmarks/results/coding_rl_train_tasks.json: {"<key>": {"settings": {...},
"iterations": [{"iteration", "policy_version", "reward_mean", "rewards_by_task":
{task: [reward per episode]}, "changed_workspace_share", "tool_errors", "hints_by_category",
"ratios", "logprob_shift", "seconds", "episodes_per_minute"}, ...], "heldout_after":
{"after_iteration", "heldout_reward", "rewards_by_task", ...}}}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tomllib
from collections import defaultdict
from pathlib import Path

from coding_agent_learning import evaluate_weights, heldout_episodes
from results_file import store

RESULT = Path(__file__).parent / "results" / "coding_rl_train_tasks.json"
LOOP_CONFIG = Path(__file__).parents[1] / "configs" / "coding-smol.toml"


def copy_tasks(tasks: list[Path], into: Path) -> Path:
    """Copies of the train task directories `tasks` in `into/tasks` (the loop trains on
    every task directory of its `tasks.tasks_dir`); held-out tasks are refused."""
    from etude.recipes.coding.curriculum import HeldOutError, refuse_heldout

    try:
        refuse_heldout(tasks)
    except HeldOutError as err:
        raise SystemExit(f"--tasks: {err}") from err
    for task in tasks:  # all checked before anything is copied
        if not (task / "task.json").is_file():
            raise SystemExit(f"{task} is not a task directory (no task.json)")
    root = into / "tasks"
    for task in tasks:
        if not (root / task.name).is_dir():
            shutil.copytree(task, root / task.name)
    extra = {p.name for p in root.iterdir()} - {t.name for t in tasks}
    if extra:
        raise SystemExit(f"{root} holds tasks not given with --tasks: {sorted(extra)}")
    return root


def rewards_by_task(episodes: list[dict]) -> dict[str, list[float]]:
    """Each task's episode rewards, tasks in sorted order."""
    by_task = defaultdict(list)
    for episode in episodes:
        by_task[episode["task"]].append(episode["reward"])
    return dict(sorted(by_task.items()))


SHIFT = "logprob_shift.json"  # in iter_NNNN/: measured right after that iteration's update


def logprob_shift(weights: Path, graded: Path, max_tokens: int) -> dict:
    """How one update moved the policy (the weights in `weights`, after it) on the episodes
    it trained on (`graded`, the iteration's graded.jsonl, sampled before it): see
    `episode_shifts`."""
    from etude.recipes.sft import load_policy

    model, tok = load_policy(str(weights))
    records = [json.loads(x) for x in graded.read_text().splitlines() if x.strip()]
    return episode_shifts(model, tok, records, max_tokens)


def episode_shifts(model, tok, records: list[dict], max_tokens: int) -> dict:
    """How `model` differs from the sampler of `records` (graded episodes) on them: per
    episode, the mean over its sampled tokens of log pi_model - log pi_sampler, grouped by the
    sign of its advantage (reward minus its task's mean reward), and its sum over the episode
    (`sequence_mean`: the change of the episode's log-probability, in nats); episodes over
    `max_tokens` (the update's `loss.max_tokens`) are left out as the update leaves them
    out."""
    import torch

    from etude.rl.advantages import group_advantages
    from etude.rl.loss import token_logprobs
    from etude.rl.trajectory import HFChat, Trajectory, tokenize

    model.eval()
    chat = HFChat(tok)
    tasks = sorted({r["task_id"] for r in records})
    advantages = group_advantages(  # the update's groups: one per task
        torch.tensor([r["reward"] for r in records]),
        torch.tensor([tasks.index(r["task_id"]) for r in records]),
    ).tolist()
    shifts = {"positive": [], "negative": [], "zero": []}
    totals = {"positive": [], "negative": [], "zero": []}
    for record, advantage in zip(records, advantages, strict=True):
        tt = tokenize(Trajectory.from_dict(record).messages, chat)
        if len(tt.tokens) > max_tokens or not tt.sampled.any():
            continue
        with torch.no_grad():  # logits [1, T, V] -> log-probs [T] of each next token
            after = token_logprobs(model(input_ids=tt.tokens[None]).logits, tt.tokens[None])[0]
        shift = (after - tt.sampler_logprobs)[tt.sampled]
        sign = "positive" if advantage > 1e-9 else "negative" if advantage < -1e-9 else "zero"
        shifts[sign].append(round(shift.mean().item(), 5))
        totals[sign].append(round(shift.sum().item(), 3))
    return {
        "per_episode": shifts,
        "mean": {k: round(statistics.mean(v), 5) if v else None for k, v in shifts.items()},
        "sequence_mean": {
            k: round(statistics.mean(v), 3) if v else None for k, v in totals.items()
        },
    }


def iteration_record(rl: Path, summary: dict) -> dict:
    """One iteration's figures from its summary and its graded episodes."""
    it_dir = rl / f"iter_{summary['iteration']:04d}"
    episodes = heldout_episodes(it_dir, "graded.jsonl")
    shift = json.loads((it_dir / SHIFT).read_text()) if (it_dir / SHIFT).is_file() else None
    return {
        "iteration": summary["iteration"],
        "policy_version": summary["policy_version"],  # updates before its rollouts
        "reward_mean": summary["reward_mean"],
        "rewards_by_task": rewards_by_task(episodes),
        "changed_workspace_share": statistics.mean(e["changed_workspace"] for e in episodes),
        "zeroed_by_monitor": sum(bool(e["zeroed_by"]) for e in episodes),
        "tool_call_rate": summary["tool_call_rate"],
        "tool_errors": summary["tool_errors"],
        "ends": summary["ends"],
        "hints_by_category": summary["hints_by_category"],
        "rl_loss": summary["rl_loss"],
        "ref_kl": summary.get("ref_kl"),  # loss.ref_kl's term at the last pass (None: off)
        "ratios": summary["ratios"],
        "logprob_shift": shift,
        "seconds": summary["seconds"],
        "episodes_per_minute": summary["episodes_per_minute"],
    }


def evaluate_heldout(cfg, weights: Path, iteration: int, it_dir: Path) -> dict:
    """The loop's held-out evaluation (what it runs after an update with
    `tasks.heldout_dir`; `cfg` names the directory) of the checkpoint `weights`, the
    policy after `iteration` updates, in `it_dir` (reused when its summary.json is
    there)."""
    from etude.recipes.coding.loop import find_heldout

    summary = evaluate_weights(cfg, weights, find_heldout(cfg), it_dir, iteration)
    episodes = heldout_episodes(it_dir)
    return {
        "after_iteration": iteration,
        "heldout_reward": summary["heldout_reward"],
        "rewards_by_task": rewards_by_task(episodes),
        "changed_workspace_share": statistics.mean(e["changed_workspace"] for e in episodes),
        "tool_errors": summary["heldout_tool_errors"],
        "seconds": round(summary["seconds"], 1),
    }


def main() -> None:
    from etude.recipes.coding.checkpoint import read_state
    from etude.recipes.coding.config import parse_config
    from etude.recipes.coding.loop import train
    from etude.rl.update import AGGREGATIONS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-start", required=True, help="a checkpoint directory")
    parser.add_argument("--tasks", nargs="+", required=True, help="train task directories")
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--iterations", type=int, default=5, help="0: no RL, the warm start on --heldout"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.002, help="Muon's learning rate")
    parser.add_argument("--train-layers", type=int, default=4, help="0: all")
    parser.add_argument("--turn-tokens", type=int, default=768)
    parser.add_argument("--episode-tokens", type=int, default=2048)
    parser.add_argument("--max-turns", type=int, default=7)
    parser.add_argument("--context", type=int, default=6015, help="also loss.max_tokens")
    parser.add_argument("--passes", type=int, default=1, help="optimizer steps per batch")
    parser.add_argument("--aggregation", default="token", choices=AGGREGATIONS)
    parser.add_argument(
        "--negative-weight", type=float, default=1.0, help="loss.negative_weight (1: GRPO)"
    )
    parser.add_argument(
        "--ref-kl", type=float, default=0.0, help="loss.ref_kl: KL towards the warm start"
    )
    parser.add_argument(
        "--no-hints", action="store_true", help="every hint category's weight 0: plain GRPO"
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument(
        "--heldout", default="", help="then evaluate the last weights on these held-out tasks"
    )
    parser.add_argument("--key", required=True, help="store the run under this key")
    args = parser.parse_args()
    if args.iterations < 0 or (args.iterations == 0 and not args.heldout):
        raise SystemExit("--iterations: 1 or more, or 0 with --heldout DIR (the warm start's)")
    warm = Path(args.warm_start)
    if not (warm / "state.json").is_file():
        raise SystemExit(f"--warm-start {warm} is not a checkpoint directory (no state.json)")
    out = Path(args.out)
    tasks_dir = copy_tasks([Path(t) for t in args.tasks], out)
    rl = out / "rl"

    data = tomllib.loads(LOOP_CONFIG.read_text())
    data |= {"seed": args.seed, "out_dir": str(rl)}
    data["tasks"] |= {"tasks_dir": str(tasks_dir), "heldout_dir": ""}
    data["model"] |= {
        "init": str(warm),
        "max_new_tokens": args.turn_tokens,
        "max_context": args.context,
        "device": args.device,
    }
    data["rollout"] |= {
        "tasks_per_iteration": len(args.tasks),
        "group_size": args.group_size,
        "max_tokens": args.episode_tokens,
        "max_turns": args.max_turns,
    }
    data["loss"] |= {  # an episode that fills the context is trained on
        "max_tokens": args.context,
        "passes": args.passes,
        "aggregation": args.aggregation,
        "negative_weight": args.negative_weight,
        "ref_kl": args.ref_kl,
    }
    if args.no_hints:  # no category weighted and none given a mode: no teacher pass
        data["loss"] |= {"weights": {}, "modes": {}}
    data["optim"] |= {"lr": args.lr, "train_layers": args.train_layers}
    settings = {k: v for k, v in vars(args).items() if k != "key"}
    if args.iterations == 0:  # no RL: the warm start's own held-out reward, the baseline
        data["tasks"] |= {"heldout_dir": args.heldout}
        heldout = evaluate_heldout(parse_config(data), warm, 0, out / "heldout-warm-start")
        store(
            RESULT,
            "coding_rl_train_tasks",
            args.key,
            {"settings": settings, "iterations": [], "heldout_after": heldout},
        )
        print(f"warm start: held-out reward {heldout['heldout_reward']}")
        return
    for iterations in range(1, args.iterations + 1):  # saved after each: a cut run keeps them
        train(parse_config(data | {"iterations": iterations}), resume=(rl / "checkpoint").exists())
        it_dir = rl / f"iter_{iterations:04d}"
        if not (it_dir / SHIFT).is_file():  # only now are the weights those after this update
            shift = logprob_shift(rl / "checkpoint", it_dir / "graded.jsonl", args.context)
            (it_dir / SHIFT).write_text(json.dumps(shift) + "\n")
        save(args.key, settings, rl)
    if args.heldout:
        data["tasks"] |= {"heldout_dir": args.heldout}
        iteration = read_state(rl / "checkpoint")["iteration"]
        it_dir = rl / f"heldout-after-{iteration}"
        heldout = evaluate_heldout(parse_config(data), rl / "checkpoint", iteration, it_dir)
        save(args.key, settings, rl, heldout)


def save(key: str, settings: dict, rl: Path, heldout: dict | None = None) -> None:
    """Store the loop run in `rl` so far under `key` of RESULT."""
    summaries = [json.loads(x) for x in (rl / "metrics.jsonl").read_text().splitlines()]
    run = {"settings": settings, "iterations": [iteration_record(rl, s) for s in summaries]}
    result = json.loads(RESULT.read_text()) if RESULT.is_file() else {}
    stored = result.get(key, {}).get("heldout_after")
    if heldout is None and stored and stored["after_iteration"] == summaries[-1]["iteration"]:
        heldout = stored  # a rerun without --heldout keeps what still describes the weights
    if heldout is not None:
        run["heldout_after"] = heldout
    store(RESULT, "coding_rl_train_tasks", key, run)
    last = run["iterations"][-1]
    print(f"iteration {last['iteration']}: reward {last['reward_mean']}", last["rewards_by_task"])


if __name__ == "__main__":
    main()

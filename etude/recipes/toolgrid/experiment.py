"""The ToolGrid textual-feedback experiment: arms with the same episode budget, several seeds,
success on held-out tool registries, paired-by-seed bootstrap intervals against RL only.

Arms (all start from one shared warm-started policy, so seeds vary RL sampling, task order
and evaluation sampling, not the warm start), each hint category (tool-not-found,
invalid-arguments) in one feedback mode (`etude.rl.feedback_modes`):
- rl: the group-relative clipped policy gradient alone;
- kl λ: + λ·KL to the live hinted teacher on the hinted turns (the seed method);
- advantage_weight: the hinted turns' advantages weighted by the bounded teacher/student
  gap, no extra loss term; with the live teacher, and with a frozen one
  (`etude.rl.teacher_weights`, the experiment's `teacher` settings);
- gated λ: + λ·(σ-gated forward KL) on the tokens the teacher endorses; live and frozen
  teacher.

`etude rl experiment toolgrid` runs it and writes `textual_feedback_modes.json` and a PNG
plot. Before the arms, the warm start must pass the pre-flight gap check
(`etude.recipes.toolgrid.hint_reading.gap_check`): with a hinted teacher no better than the
student, no arm can gain from it.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import random
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from etude.recipes.toolgrid.hint_reading import MISTAKE_CONTEXTS, gap_check, predicts_benefit
from etude.recipes.toolgrid.train import (
    TARGETED,
    RunConfig,
    chat_tokenizer,
    eval_tasks,
    evaluate,
    load_config,
    new_policy,
    train,
    warm_started_policy,
)
from etude.rl.teacher_weights import TeacherSettings

SUMMARY = "textual_feedback_modes"
FROZEN = TeacherSettings(kind="frozen", refresh="no_reward_drop", every=10)


def paired_bootstrap(
    diffs: list[float], n: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of per-seed differences and its 95% percentile bootstrap interval
    (resampling seeds with replacement)."""
    if not diffs:
        raise ValueError("no differences to bootstrap")
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=len(diffs))) / len(diffs) for _ in range(n))
    return sum(diffs) / len(diffs), means[int(0.025 * n)], means[int(0.975 * n) - 1]


def episodes_to_reach(evals: list[dict], level: float) -> int | None:
    """Episodes at the first evaluation whose held-out success is at least `level`."""
    for r in evals:
        if r["heldout_success"] >= level:
            return r["episodes"]
    return None


def arms(base: RunConfig, lam: float, frozen: TeacherSettings = FROZEN) -> dict[str, RunConfig]:
    """The experiment's arms as configs derived from `base` (λ for the modes that use one;
    `frozen`: the teacher of the frozen-teacher arms)."""

    def arm(mode: str | None, teacher: TeacherSettings | None = None) -> RunConfig:
        weights = {} if mode in (None, "advantage_weight") else dict.fromkeys(TARGETED, lam)
        modes = {} if mode is None else dict.fromkeys(TARGETED, mode)
        loss = replace(base.loss, weights=weights, modes=modes)
        if mode == "gated":  # SDAR's gate on the forward KL (docs: with the full reverse KL,
            loss = replace(loss, estimator="forward_kl")  # a gated step lowered the call)
        return replace(base, loss=loss, teacher=teacher or TeacherSettings())

    return {
        "rl": arm(None),
        f"kl λ={lam}": arm("kl"),
        "advantage_weight": arm("advantage_weight"),
        "advantage_weight frozen": arm("advantage_weight", frozen),
        f"gated λ={lam}": arm("gated"),
        f"gated λ={lam} frozen": arm("gated", frozen),
        # the turn after the failed call, where the gap check finds the hinted teacher
        # ahead of the student (docs/textual-feedback.md)
        "advantage_weight next_turn frozen": next_turn(arm("advantage_weight", frozen)),
        # the teacher's whole distribution there (forward KL), not only its log-prob of the
        # student's sampled tokens: the gap check's gain is on the action the student missed
        f"kl λ={lam} forward next_turn frozen": next_turn(forward_kl(arm("kl", frozen))),
    }


def forward_kl(cfg: RunConfig) -> RunConfig:
    """`cfg` with its distillation term estimated as KL(teacher ‖ student) over the full
    vocabulary."""
    return replace(cfg, loss=replace(cfg.loss, estimator="forward_kl"))


def next_turn(cfg: RunConfig) -> RunConfig:
    """`cfg` with its hints' teacher pass on the turn after the hinted one (scope
    "next_turn")."""
    return replace(cfg, loss=replace(cfg.loss, scope="next_turn"))


def select_arms(all_arms: dict[str, RunConfig], names: list[str] | None) -> dict[str, RunConfig]:
    """The arms named in `names` (None: all), in `all_arms`' order; "rl", the baseline every
    arm is compared with, always included. Unknown names are an error listing the known."""
    if names is None:
        return all_arms
    unknown = [n for n in names if n not in all_arms]
    if unknown:
        raise ValueError(f"unknown arm(s) {unknown}; the arms are: {', '.join(all_arms)}")
    return {n: c for n, c in all_arms.items() if n == "rl" or n in names}


def same_experiment(saved: dict, identity: dict) -> bool:
    """Whether a runs directory's `experiment.json` (`saved`) records the experiment
    `identity` describes. The list of arms is not compared (each arm's runs have their own
    directory and derive from the config and λ, so arms added later run beside the old
    ones), and a config field that `saved` lacks (added to etude after it was written)
    counts as equal when `identity` holds its default."""
    defaults = json.loads(json.dumps(asdict(RunConfig())))

    def filled(old, new, default):
        if not (isinstance(old, dict) and isinstance(new, dict) and isinstance(default, dict)):
            return old
        out = {k: filled(v, new.get(k), default.get(k)) for k, v in old.items()}
        for k, v in new.items():
            if k not in old and k in default and v == default[k]:
                out[k] = v
        return out

    def comparable(record: dict) -> dict:
        return {k: v for k, v in record.items() if k != "arms"}

    saved = {**saved, "config": filled(saved.get("config"), identity["config"], defaults)}
    return comparable(saved) == comparable(identity)


def warm_start_key(cfg: RunConfig) -> str:
    """A digest of everything the warm start depends on (seed, model, environment and
    warm-start settings; not the RL, loss or evaluation settings)."""
    parts = {k: asdict(cfg)[k] for k in ("model", "toolgrid", "warm_start")} | {"seed": cfg.seed}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def one_thread_warm_start(cfg: RunConfig) -> torch.nn.Module:
    """`warm_started_policy` on the training registries with one thread, as the arms'
    workers run: the same bits on every machine with the same torch."""
    train_regs, _ = cfg.toolgrid.registries()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return warm_started_policy(cfg, train_regs)
    finally:
        torch.set_num_threads(threads)


def cached_warm_start(cfg: RunConfig, directory: Path) -> tuple[torch.nn.Module, bool]:
    """The warm-started policy of `cfg` (`warm_started_policy`, one thread, as the arms'
    workers: the same bits), loaded from `directory` when a warm start of the same settings
    (`warm_start_key`) was saved there, else trained and saved (written whole, then renamed,
    so an interrupted one is never loaded). Returns (policy, loaded)."""
    path = directory / f"warm_start-{warm_start_key(cfg)}.pt"
    if path.is_file():
        policy = new_policy(cfg.model)
        policy.load_state_dict(torch.load(path, map_location="cpu"))
        return policy, True
    policy = one_thread_warm_start(cfg)
    directory.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".pt.partial")
    torch.save(policy.state_dict(), partial)
    partial.replace(path)
    return policy, False


def _run(job: tuple[str, int, RunConfig, dict]) -> tuple[str, int, list[dict], float]:
    name, seed, cfg, state = job
    torch.set_num_threads(1)
    policy = new_policy(cfg.model)
    policy.load_state_dict(state)
    start = time.perf_counter()
    records = train(cfg, policy=policy, progress=False)
    return name, seed, records, time.perf_counter() - start


def budget(base: RunConfig, seeds: list[int]) -> dict:
    """The experiment's episode budget, the same for every arm, as the summary reports it."""
    return {
        "episodes_per_run": base.rl.steps * base.rl.tasks_per_step * base.rl.group_size,
        "rl_steps": base.rl.steps,
        "tasks_per_step": base.rl.tasks_per_step,
        "group_size": base.rl.group_size,
        "seeds": seeds,
        "warm_start_steps": base.warm_start.steps,
        "eval_episodes": base.eval.episodes,
        "heldout_registries": base.toolgrid.heldout_registries,
    }


WARM_START = "warm start"  # the final evaluation's name for the shared warm-started policy


def _final_eval_path(runs: Path, name: str, seed: int, episodes: int) -> Path:
    if name == WARM_START:
        return runs / f"final_eval_{episodes}_warm_start_seed{seed}.json"
    return runs / run_dir_name(name, seed) / f"final_eval_{episodes}.json"


def _evaluate_saved(job: tuple[str, int, str, RunConfig]) -> tuple[str, int, dict]:
    name, seed, policy_path, cfg = job
    torch.set_num_threads(1)  # as the runs: the same bits
    policy = new_policy(cfg.model)
    policy.load_state_dict(torch.load(policy_path, map_location="cpu"))
    return name, seed, evaluate(policy, chat_tokenizer(cfg.model), eval_tasks(cfg), cfg, seed + 3)


def final_evaluation(
    base: RunConfig, names: list[str], seeds: list[int], runs: Path, episodes: int, workers: int
) -> dict:
    """Every run's final policy, and the shared warm start, evaluated again on `episodes`
    held-out tasks: the in-run evaluation's tasks and per-seed sampling seeds, extended (its
    first `cfg.eval.episodes` episodes are the in-run ones), so within a seed every arm and
    the warm start play the same episodes. 48 episodes per evaluation leave a standard error
    of about 0.04 at 10 % success, as large as the differences between arms; this evaluation
    is the experiment's final comparison. Cached per run in `final_eval_<episodes>.json`.

    Returns {"episodes", "arms": {name: {"success": {seed: s}, "error_rate": {seed: e},
    "success_mean", "success_diff_vs_rl": {"mean", "ci95"}}}} with `WARM_START` as an arm
    (the differences to "rl" only when "rl" is among `names`)."""
    cfg = replace(base, eval=replace(base.eval, episodes=episodes))
    cached: dict[tuple[str, int], dict] = {}
    jobs = []
    for name in [WARM_START, *names]:
        for seed in seeds:
            path = _final_eval_path(runs, name, seed, episodes)
            if path.is_file():
                cached[name, seed] = json.loads(path.read_text())
            else:
                policy = runs / "warm_start.pt" if name == WARM_START else path.parent / "policy.pt"
                jobs.append((name, seed, str(policy), cfg))
    if jobs:
        with mp.get_context("spawn").Pool(workers) as pool:
            for name, seed, result in pool.imap_unordered(_evaluate_saved, jobs):
                cached[name, seed] = result
                _final_eval_path(runs, name, seed, episodes).write_text(json.dumps(result) + "\n")
                print(f"final evaluation: {name} seed {seed}: {result['heldout_success']:.3f}")
    out: dict = {"episodes": episodes, "arms": {}}
    for name in [WARM_START, *names]:
        success = {s: cached[name, s]["heldout_success"] for s in seeds}
        out["arms"][name] = {
            "success": success,
            "error_rate": {s: cached[name, s]["heldout_error_rate"] for s in seeds},
            "calls_per_episode": {s: cached[name, s]["heldout_calls_per_episode"] for s in seeds},
            "success_mean": sum(success.values()) / len(seeds),
        }
    if "rl" in out["arms"]:
        rl = out["arms"]["rl"]["success"]
        for arm in out["arms"].values():
            mean, lo, hi = paired_bootstrap([arm["success"][s] - rl[s] for s in seeds])
            arm["success_diff_vs_rl"] = {"mean": mean, "ci95": [lo, hi]}
    return out


def run_experiment(
    base: RunConfig,
    seeds: list[int],
    lam: float,
    out: Path,
    runs: Path,
    workers: int = 2,
    require_hint_reading: bool = True,
    gap_tasks: int = 300,
    gap_episodes: int = 100,
    gap_mistakes: int = 100,
    final_episodes: int = 240,
    arm_names: list[str] | None = None,
    warm_starts: Path | None = None,
) -> dict:
    """Warm-start once, run the pre-flight gap check on the warm start
    (`etude.recipes.toolgrid.hint_reading.gap_check`, printed; with `gap_mistakes` > 0 it
    decides on the hints given after the warm start's own mistakes in that many unhinted
    held-out episodes, where the arms' teacher reads them; 0: on the first call alone), run
    every arm × seed (in `workers` processes, logs under `runs`), summarize into
    `out/textual_feedback_modes.json` and `.png`. When the gap is about zero and
    `require_hint_reading` is set, no arm runs: the check goes to `out/gap_check.json` and
    `GapCheckError` says why.

    It resumes: `runs/experiment.json` records the experiment (config, λ, arms, gap-check
    sizes; not the seeds, which only add runs); when it matches, the saved warm start and
    gap check are reused and runs whose `log.jsonl` is complete are loaded instead of re-run
    (so more seeds later run only the new runs). A different experiment in the same `runs`
    is refused. Then every final policy is evaluated again on `final_episodes` held-out
    tasks (`final_evaluation`; 0 skips it). `arm_names`: run only these arms (and "rl";
    `select_arms`), more can be added later in the same `runs`. `warm_starts`: a directory
    of warm starts shared across experiments (`cached_warm_start`), so that an experiment
    that changes only RL settings starts from the same warm start without training it
    again."""
    out.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    all_arms = arms(base, lam)
    the_arms = select_arms(all_arms, arm_names)
    identity = json.loads(
        json.dumps(
            {
                "config": asdict(base),
                "lambda": lam,
                "arms": list(all_arms),
                # a run from before the after-mistake check keeps its identity
                "gap_check": [gap_tasks, gap_episodes] + ([gap_mistakes] if gap_mistakes else []),
            }
        )
    )
    identity_path = runs / "experiment.json"
    if identity_path.exists() and not same_experiment(
        json.loads(identity_path.read_text()), identity
    ):
        raise ValueError(
            f"{runs} holds runs of a different experiment (config, λ, arms or gap check differ "
            f"from {identity_path}); give another out_dir or remove {runs}"
        )
    warm_path, check_path = runs / "warm_start.pt", runs / "gap_check.json"
    reused = identity_path.exists() and warm_path.exists()
    if reused:
        warm = new_policy(base.model)
        warm.load_state_dict(torch.load(warm_path, map_location="cpu"))
    else:
        if warm_starts is not None:
            warm, reused = cached_warm_start(base, warm_starts)
        else:
            warm = one_thread_warm_start(base)
        torch.save(warm.state_dict(), warm_path)
        identity_path.write_text(json.dumps(identity, indent=2) + "\n")
    warm_s = time.perf_counter() - t0
    # on the CPU for the workers' pickles, whichever device the warm start ran on
    state = {k: v.detach().to("cpu", copy=True) for k, v in warm.state_dict().items()}
    if check_path.is_file():
        check = json.loads(check_path.read_text())
    else:
        check = gap_check(warm, base, tasks=gap_tasks, episodes=gap_episodes, mistakes=gap_mistakes)
        check_path.write_text(json.dumps(check, indent=2) + "\n")
    print(f"gap check: {check['prediction']}", flush=True)
    if require_hint_reading and not predicts_benefit(check):
        (out / "gap_check.json").write_text(json.dumps(check, indent=2) + "\n")
        raise GapCheckError(
            f"the hinted teacher is no better than the student ({check['prediction']}; "
            f"{_placebo(check)}), so no arm can gain from it. Details in "
            f"{out / 'gap_check.json'}; warm start differently, or pass --ignore-hint-check "
            "to run the arms anyway."
        )
    results: dict[str, dict[int, list[dict]]] = {}
    jobs = []
    for name, cfg in the_arms.items():
        results[name] = {}
        for seed in seeds:
            run_dir = runs / run_dir_name(name, seed)
            if (run_dir / "log.jsonl").is_file():
                results[name][seed] = _read_log(run_dir / "log.jsonl")
            else:
                jobs.append((name, seed, replace(cfg, seed=seed, out_dir=str(run_dir)), state))
    seconds: list[float] = []
    if jobs:
        with mp.get_context("spawn").Pool(workers) as pool:
            for name, seed, records, s in pool.imap_unordered(_run, jobs):
                results[name][seed] = records
                seconds.append(s)
                print(f"done {name} seed {seed} in {s:.0f}s", flush=True)
    summary = summarize(results, seeds)
    if final_episodes:
        summary["final_evaluation"] = final_evaluation(
            base, list(the_arms), seeds, runs, final_episodes, workers
        )
    summary["gap_check"] = check
    summary["budget"] = budget(base, seeds) | {
        "warm_start_reused": reused,
        "warm_start_seconds": round(warm_s, 1),
        "runs_loaded_from_logs": sum(map(len, results.values())) - len(jobs),
        "run_seconds_median": sorted(seconds)[len(seconds) // 2] if seconds else None,
        "total_seconds": round(time.perf_counter() - t0, 1),
    }
    (out / f"{SUMMARY}.json").write_text(json.dumps(summary, indent=2))
    plot_experiment(summary, out / f"{SUMMARY}.png")
    return summary


def _read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def summarize(results: dict[str, dict[int, list[dict]]], seeds: list[int]) -> dict:
    """Per arm: held-out success curve (mean over seeds), final success and targeted error
    rate per seed, episodes to 80%, and paired differences to `rl` with bootstrap CIs."""
    out: dict = {"arms": {}}
    for name, by_seed in results.items():
        evals = {s: [r for r in by_seed[s] if "heldout_success" in r] for s in seeds}
        xs = [r["episodes"] for r in evals[seeds[0]]]
        curve = [
            sum(evals[s][i]["heldout_success"] for s in seeds) / len(seeds) for i in range(len(xs))
        ]
        out["arms"][name] = {
            "episodes": xs,
            "mean_heldout_success": curve,
            "final_success": {s: evals[s][-1]["heldout_success"] for s in seeds},
            "final_error_rate": {s: evals[s][-1]["heldout_error_rate"] for s in seeds},
            "episodes_to_80pct": {s: episodes_to_reach(evals[s], 0.8) for s in seeds},
            "final_calls_per_episode": {
                s: evals[s][-1].get("heldout_calls_per_episode") for s in seeds
            },
            "train_error_rate_last": {
                s: [r for r in by_seed[s] if "step" in r][-1]["error_rate"] for s in seeds
            },
        }
    base = out["arms"]["rl"]
    for arm in out["arms"].values():
        for metric in ("final_success", "final_error_rate"):
            diffs = [arm[metric][s] - base[metric][s] for s in seeds]
            vals = list(arm[metric].values())
            mean, lo, hi = paired_bootstrap(diffs)
            arm[metric + "_mean"] = sum(vals) / len(vals)
            arm[metric + "_diff_vs_rl"] = {"mean": mean, "ci95": [lo, hi]}
    return out


def run_dir_name(arm: str, seed: int) -> str:
    return f"{arm.replace(' ', '_').replace('=', '')}_seed{seed}"


def summarize_logs(runs: Path, base: RunConfig, seeds: list[int], lam: float, out: Path) -> dict:
    """The summary (JSON and plot in `out`) rebuilt from the runs' `log.jsonl` files, for
    arms whose every seed finished; the arms left out are listed under `incomplete`."""
    results: dict[str, dict[int, list[dict]]] = {}
    incomplete = []
    for name in arms(base, lam):
        logs = [runs / run_dir_name(name, s) / "log.jsonl" for s in seeds]
        if not all(f.is_file() for f in logs):
            incomplete.append(name)
            continue
        results[name] = {s: _read_log(f) for s, f in zip(seeds, logs)}
    if "rl" not in results:
        raise ValueError(f"the rl arm has not finished in {runs}; nothing to compare against")
    summary = summarize(results, seeds)
    summary["incomplete"] = incomplete
    summary["budget"] = budget(base, seeds)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{SUMMARY}.json").write_text(json.dumps(summary, indent=2))
    plot_experiment(summary, out / f"{SUMMARY}.png")
    return summary


def plot_experiment(summary: dict, path: Path) -> None:
    """Mean held-out success curves per arm; beside them, when the summary has one, the
    final evaluation per arm (mean and each seed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    final = summary.get("final_evaluation")
    fig, axes = plt.subplots(1, 2 if final else 1, figsize=(12 if final else 7, 4.2), squeeze=False)
    ax = axes[0][0]
    for name, arm in summary["arms"].items():
        ax.plot(arm["episodes"], arm["mean_heldout_success"], "o-", label=name, ms=3)
    b = summary.get("budget", {})
    ax.set_xlabel("training episodes")
    ax.set_ylabel("held-out success (mean over seeds)")
    ax.set_title(f"ToolGrid, {len(b.get('seeds', []))} seeds, {b.get('eval_episodes')} episodes")
    ax.legend(fontsize=8)
    if final:
        ax = axes[0][1]
        names = list(final["arms"])
        for i, name in enumerate(names):
            arm = final["arms"][name]
            ax.bar(i, arm["success_mean"], color="lightgray")
            ax.plot([i] * len(arm["success"]), list(arm["success"].values()), "k.", ms=6)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("held-out success")
        ax.set_title(f"final policies, {final['episodes']} episodes per seed (dots: seeds)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _placebo(check: dict) -> str:
    """The placebo's median log-prob gain where the gate decided (after the student's own
    mistakes when the check has them, else at the first call), for the refusal message."""
    if "after_mistake" not in check:
        return f"placebo {check['placebo']['median_logp_gain_vs_none']:+.2f} nats"
    row = check["after_mistake"]["by_category"]["all"]
    gains = [row[p]["placebo_gain"]["median"] for p in MISTAKE_CONTEXTS]
    shown = ", ".join(f"{p} {g:+.2f}" for p, g in zip(MISTAKE_CONTEXTS, gains) if g is not None)
    return f"placebo after the mistakes: {shown or 'nothing to score'} nats"


class GapCheckError(RuntimeError):
    """The warm start's hinted-vs-unhinted gap is about zero, so the arms did not run."""


def main(
    out: str,
    quick: bool = False,
    config: str = "configs/toolgrid.toml",
    require_hint_reading: bool = True,
    seeds: tuple[int, ...] = (0, 1, 2),
    workers: int = 2,
    lam: float = 0.5,
    final_episodes: int = 240,
    arm_names: list[str] | None = None,
    gap_mistakes: int = 100,
    gap_tasks: int = 300,
    gap_episodes: int = 100,
    device: str | None = None,
) -> int:
    """`etude rl experiment toolgrid`: the configured sizes, or a smoke-size run (`quick`).
    `device`: where every policy runs, instead of the config's `[model] device`.
    Exit 1 when the gap check finds no gap (unless `require_hint_reading` is off)."""
    base = load_config(config)
    if device is not None:
        base = replace(base, model=replace(base.model, device=device))
    if quick:
        base = replace(
            base,
            warm_start=replace(base.warm_start, steps=4, batch=4),
            rl=replace(base.rl, steps=2, tasks_per_step=2, group_size=2, max_turn_tokens=12),
            eval=replace(base.eval, every=1, episodes=2),
            toolgrid=replace(base.toolgrid, train_registries=20, heldout_registries=5),
        )
        seeds = seeds[:2]
    check = {"gap_tasks": 20, "gap_episodes": 4, "gap_mistakes": min(gap_mistakes, 4)}
    if not quick:
        check = {"gap_tasks": gap_tasks, "gap_episodes": gap_episodes, "gap_mistakes": gap_mistakes}
    final_episodes = min(final_episodes, 4) if quick else final_episodes
    try:
        summary = run_experiment(
            base,
            list(seeds),
            lam,
            Path(out),
            Path(base.out_dir) / ("experiment-modes-quick" if quick else "experiment-modes"),
            workers=workers,
            require_hint_reading=require_hint_reading,
            final_episodes=final_episodes,
            arm_names=arm_names,
            warm_starts=None if quick else Path(base.out_dir) / "warm-starts",
            **check,
        )
    except GapCheckError as err:
        print(f"etude rl experiment: {err}", file=sys.stderr)
        return 1
    for name, arm in summary["arms"].items():
        d = arm["final_success_diff_vs_rl"]
        lo, hi = d["ci95"]
        print(
            f"{name:28s} success {arm['final_success_mean']:.3f}  "
            f"vs rl {d['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        )
    if "final_evaluation" in summary:
        final = summary["final_evaluation"]
        print(f"final evaluation on {final['episodes']} held-out episodes per run:")
        for name, arm in final["arms"].items():
            lo, hi = arm["success_diff_vs_rl"]["ci95"]
            print(
                f"{name:28s} success {arm['success_mean']:.3f}  "
                f"vs rl {arm['success_diff_vs_rl']['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
            )
    return 0

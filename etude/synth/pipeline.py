"""`etude synth`: repositories in, tasks out. Thin orchestration over the other modules.

Layout of `--out DIR`:
    tasks/<task id>/          complete tasks (task.json written last, then renamed in)
    work/<repo>/              pristine copy, baseline venv, per-candidate results
    summary.json              per repository: candidates, valid tasks, rejections, minutes

Phase 1 establishes each repository's baseline (install, run twice, coverage); phase 2
processes every candidate of every repository. Both phases go through the executor
(process pool or Ray). A rerun skips repositories whose baseline is stored and candidates
whose result is stored, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import resource
import shutil
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from etude.sandbox import cpu_seconds_used
from etude.synth import baseline as baseline_mod
from etude.synth.audit import shipped_text
from etude.synth.candidate import Job, Settings, process
from etude.synth.discover import SKIPPED_DIRS, Repo, prepare
from etude.synth.errors import SynthError
from etude.synth.executor import map_unordered
from etude.synth.slice import KINDS, Candidate, slice_candidates


def _cpu_seconds() -> float:
    """CPU seconds of this process and of every command it ran in the sandbox (the
    sandbox accounts for those, by cgroup or rusage; adding RUSAGE_CHILDREN would count
    them twice)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + cpu_seconds_used()


def _timed(fn, *args) -> tuple[object, float, float]:
    wall, cpu = time.perf_counter(), _cpu_seconds()
    value = fn(*args)
    return value, time.perf_counter() - wall, _cpu_seconds() - cpu


def repo_phase(args: tuple[str, str, Settings]) -> dict:
    """Prepare one repository and slice its candidates (runs in a worker)."""
    source, work_root, settings = args
    wall, cpu = time.perf_counter(), _cpu_seconds()
    staging = Path(work_root) / f".preparing-{Path(source).name}"
    try:
        repo = prepare(Path(source), staging)
        work_dir = Path(work_root) / repo.name
        state_file = work_dir / "repo_state.json"
        if state_file.exists():
            state = json.loads(state_file.read_text())
            if (
                state["repo"]["revision"] == repo.revision
                and state.get("slow_test_s") == settings.slow_test_s
                and "importable" in state
            ):
                shutil.rmtree(staging, ignore_errors=True)
                return state
        shutil.rmtree(work_dir, ignore_errors=True)
        staging.rename(work_dir)
        repo.root = work_dir / "pristine"
        base = baseline_mod.establish(
            repo,
            work_dir,
            test_timeout_s=settings.test_timeout_s,
            suite_timeout_s=settings.suite_timeout_s,
            slow_test_s=settings.slow_test_s,
        )
        (work_dir / "environment.txt").write_bytes(_shipped(repo, work_dir / "base" / "venv"))
        candidates, rejections = slice_candidates(repo, base.lines, base.kept)
        candidates = hardest_first_by_kind(candidates)
        state = {
            "repo": repo.to_json(),
            "kept": base.kept,
            "dropped": base.dropped,
            "extras": list(base.extras),
            "requirements": base.requirements,
            "pytest_plugins": base.plugins,
            "importable": base.importable,
            "slow_test_s": settings.slow_test_s,
            "candidates": [c.to_json() for c in candidates],
            "slice_rejections": [
                {"candidate": f"{r.feature[0]}:{r.feature[1]}", "key": r.key, "reason": r.reason}
                for r in rejections
            ],
            "seconds": time.perf_counter() - wall,
            "cpu_seconds": _cpu_seconds() - cpu,
        }
        state_file.write_text(json.dumps(state, indent=2))
        shutil.rmtree(work_dir / "base" / "workspace", ignore_errors=True)
        return state
    except SynthError as err:
        shutil.rmtree(staging, ignore_errors=True)
        return {"error": str(err), "source": source}


def _shipped(repo: Repo, venv: Path) -> bytes:
    """What the untouched repository and its environment already contain, as the audit
    reads it (audit.shipped_text): every file of the repository but its package source,
    bytecode, history and build directories (docs, changelogs, scripts, licenses, tests
    and configuration included), and every file of the baseline venv (package metadata,
    the README in it, dependencies' licenses). A token of deleted code found here is no
    leak."""
    source = set(repo.source_files)

    def not_shipped(rel: str) -> bool:
        name = rel.rstrip("/").rsplit("/", 1)[-1]
        if rel.endswith("/"):
            return name in SKIPPED_DIRS or name == "__pycache__"
        return rel in source or name.endswith((".pyc", ".pyo"))

    repository = shipped_text({"repository": repo.root}, not_shipped)
    return repository + b"\n" + shipped_text({"environment": venv}, lambda rel: False)


def hardest_first_by_kind(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates hardest first, taken in turn from each kind (definition, module, method
    group; see slice.KINDS), so that `--max-candidates N` samples every kind."""
    queues = [
        sorted((c for c in candidates if c.kind == kind), key=lambda c: (-c.difficulty, c.id))
        for kind in KINDS
    ]
    ordered = []
    for turn in range(max(map(len, queues), default=0)):
        ordered += [queue[turn] for queue in queues if turn < len(queue)]
    return ordered


def chosen(candidates: list[dict], max_candidates: int | None, max_lines: int | None) -> list[dict]:
    """The first `max_candidates` of `candidates` (`Candidate.to_json()`s, hardest first,
    kinds in turn) among those deleting at most `max_lines` lines (None: no limit)."""
    sized = [c for c in candidates if max_lines is None or c["lines"] <= max_lines]
    return sized[:max_candidates]


def candidate_phase(job: Job) -> dict:
    """Process one candidate and store its result (runs in a worker)."""
    record, wall, cpu = _timed(process, job)
    record |= {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
    results = Path(job.work_dir) / "results"
    results.mkdir(exist_ok=True)
    (results / f"{record['candidate']}.json").write_text(json.dumps(record, indent=2))
    return record


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def synthesize(
    sources: list[Path],
    out: Path,
    *,
    workers: int = 2,
    executor: str = "local",
    settings: Settings = Settings(),  # noqa: B008 (frozen dataclass)
    max_candidates: int | None = None,
    max_lines: int | None = None,
    console: Console | None = None,
) -> dict:
    """Turn each repository or sdist in `sources` into tasks under `out/tasks`; returns the
    summary also written to `out/summary.json`. Raises SynthError when no source could be
    used at all; per-source errors are in the summary. `max_candidates` candidates per
    repository are processed, hardest first, among those deleting at most `max_lines`
    lines when it is given (a task a small model can write back in one turn)."""
    console = console or Console(stderr=True)
    out = Path(out).resolve()
    work_root, tasks_root = out / "work", out / "tasks"
    work_root.mkdir(parents=True, exist_ok=True)
    tasks_root.mkdir(exist_ok=True)
    start = time.perf_counter()
    states, errors = [], []
    with _progress(console) as progress:
        bar = progress.add_task("repositories", total=len(sources))
        jobs = [(str(Path(s).resolve()), str(work_root), settings) for s in sources]
        for _, state in map_unordered(repo_phase, jobs, executor=executor, workers=workers):
            (errors if "error" in state else states).append(state)
            progress.advance(bar)
        jobs, done = [], {}
        for state in states:
            work_dir = work_root / Repo.from_json(state["repo"]).name
            for cand in chosen(state["candidates"], max_candidates, max_lines):
                stored = work_dir / "results" / f"{cand['id']}.json"
                if stored.exists():
                    done.setdefault(state["repo"]["name"], []).append(
                        json.loads(stored.read_text())
                    )
                    continue
                jobs.append(candidate_job(state, cand, work_dir, settings))
        bar = progress.add_task("candidates", total=len(jobs) + sum(map(len, done.values())))
        progress.advance(bar, sum(map(len, done.values())))
        for job, record in map_unordered(candidate_phase, jobs, executor=executor, workers=workers):
            done.setdefault(Repo.from_json(job.repo).name, []).append(record)
            progress.advance(bar)
    summary = {
        "repositories": [
            _publish(state, done.get(state["repo"]["name"], []), tasks_root) for state in states
        ],
        "errors": errors,
        "settings": asdict(settings),
        "workers": workers,
        "executor": executor,
        "wall_minutes": round((time.perf_counter() - start) / 60, 3),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if not states:
        raise SynthError("; ".join(e["error"] for e in errors))
    return summary


def candidate_job(state: dict, cand: dict, work_dir: Path, settings: Settings) -> Job:
    """The Job that processes candidate `cand` (a `Candidate.to_json()`) of the repository
    whose `repo_phase` state is `state`."""
    return Job(
        repo=state["repo"],
        candidate=cand,
        kept=state["kept"],
        extras=tuple(state["extras"]),
        requirements=state["requirements"],
        environment_text=str(work_dir / "environment.txt"),
        work_dir=str(work_dir),
        settings=settings,
        plugins=tuple(state["pytest_plugins"]),
        importable=tuple(state["importable"]),
    )


def _publish(state: dict, records: list[dict], tasks_root: Path) -> dict:
    """Move each repository's valid, non-duplicate staged tasks into `tasks_root`."""
    seen, published = set(), []
    for record in sorted(records, key=lambda r: r["candidate"]):
        if record["status"] != "valid":
            continue
        if record["dedupe_key"] in seen:
            record |= {
                "status": "rejected",
                "reason": "duplicate of another candidate's code",
                "reason_key": "duplicate",
            }
            continue
        seen.add(record["dedupe_key"])
        staged, final = Path(record["task_dir"]), tasks_root / Path(record["task_dir"]).name
        # Only a complete staged task (task.json is written last) replaces a published one:
        # a staging directory left by an interrupted reprocessing must not.
        if (staged / "task.json").exists():
            shutil.rmtree(final, ignore_errors=True)
            staged.rename(final)
        if (final / "task.json").exists():
            published.append(final.name)
    # Processed candidates and definitions sliced out (never processed) are counted apart,
    # each by stable key (validate.REASONS, slice.Rejection).
    reasons = Counter(r["reason_key"] for r in records if r["status"] != "valid")
    sliced = Counter(r["key"] for r in state["slice_rejections"])
    cpu = state["cpu_seconds"] + sum(r.get("cpu_s", 0.0) for r in records)
    wall = state["seconds"] + sum(r.get("wall_s", 0.0) for r in records)
    processed = len(records)
    return {
        "repository": state["repo"]["name"],
        "revision": state["repo"]["revision"],
        "tests_kept": len(state["kept"]),
        "tests_dropped": len(state["dropped"]),
        "candidates": processed,
        "not_processed": len(state["candidates"]) - processed,
        "sliced_out": len(state["slice_rejections"]),
        "candidates_by_kind": dict(
            Counter(c.get("kind", "definition") for c in state["candidates"])
        ),
        "processed_by_kind": dict(Counter(r.get("kind", "definition") for r in records)),
        "valid_by_kind": dict(
            Counter(r.get("kind", "definition") for r in records if r["status"] == "valid")
        ),
        "valid": len(published),
        "yield": round(len(published) / processed, 3) if processed else 0.0,
        "tasks": published,
        "rejections": dict(reasons.most_common()),
        "sliced_out_by_reason": dict(sliced.most_common()),
        "rejected": [
            {"candidate": r["candidate"], "reason": r["reason"]}
            for r in records
            if r["status"] != "valid"
        ],
        "worker_minutes": round(wall / 60, 3),
        "cpu_minutes": round(cpu / 60, 3),
        "valid_per_cpu_minute": round(len(published) / (cpu / 60), 3) if cpu else 0.0,
    }


def main(
    sources: list[str],
    out: str,
    *,
    workers: int,
    executor: str,
    reveal_signatures: bool,
    max_candidates: int | None,
    slow_test_limit: float = 5.0,
) -> int:
    """`etude synth`: run the pipeline, print a per-repository table; exit 1 when any
    source could not be used (its error is printed), 0 otherwise."""
    from rich.table import Table

    if workers < 1:
        raise SynthError(f"--workers must be at least 1, got {workers}")
    if not slow_test_limit > 0:
        raise SynthError(
            f"--slow-test-limit must be a positive number of seconds, got {slow_test_limit}"
        )
    console = Console(stderr=True)
    settings = Settings(reveal_signatures=reveal_signatures, slow_test_s=slow_test_limit)
    summary = synthesize(
        [Path(s) for s in sources],
        Path(out),
        workers=workers,
        executor=executor,
        settings=settings,
        max_candidates=max_candidates,
        console=console,
    )
    table = Table("repository", "candidates", "valid", "yield", "worker min", "top rejection")
    for repo in summary["repositories"]:
        top = next(iter(repo["rejections"].items()), ("", 0))
        table.add_row(
            repo["repository"],
            str(repo["candidates"]),
            str(repo["valid"]),
            f"{repo['yield']:.2f}",
            f"{repo['worker_minutes']:.2f}",
            f"{top[0]} ({top[1]})" if top[1] else "",
        )
    console.print(table)
    for error in summary["errors"]:
        console.print(f"[red]error[/red] {error['source']}: {error['error']}")
    console.print(f"tasks in {Path(out).resolve() / 'tasks'}; summary in summary.json")
    return 1 if summary["errors"] else 0

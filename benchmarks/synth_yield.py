"""Feature-deletion task synthesis on sdists etude's tests never use: yield, leaks, tamper
resistance, and per-candidate cost of the shared environment and test subsets against a
fresh venv and full test runs per candidate, side by side in one run.

Inputs: the PyPI sdists of PACKAGES (fetched once with `pip download --no-binary :all:
--no-deps` into ~/.cache/etude/sdists; each ships its tests). For each repository the
pipeline (`etude.synth.pipeline.synthesize`, 2 workers) processes the `--max-candidates`
hardest candidates and records candidates, valid tasks, rejections by key, worker- and
CPU-minutes and the share of processed candidates that became tasks. Then:

- grading: every valid task is graded with the reference (expected 1), untouched
  (expected 0) and an always-equal answer (expected binary 0 under the equality guard);
- tamper: one valid task per repository is graded with a stub answer (every deleted
  definition raises NotImplementedError) alone and with each mechanism of
  `etude.synth.tamper.TAMPERS`; a tamper is ignored when it scores no more than the stub;
- leaks: an independent check of every emitted workspace: `grep -r -a -F` for the task's
  oracle tokens (the canary included) over every file and over the output of
  `git cat-file --batch-all-objects --batch`;
- cost: the first `--compare` candidates of each repository are processed again, on one
  worker, back to back both ways (alternating which goes first): the pipeline's (the
  baseline's venv shared read-only; the canary and second runs on the tests the
  deletion can change, etude.synth.affected; stubs by node id; no failure reports where
  only pass/fail is read) and the old (`OLD_WAY`: a fresh venv per candidate, every test
  file in every run, pytest's long reports); reported per repository as the ratio of the
  median seconds per candidate (clean-up included: the old way deletes a venv each time),
  with the median seconds of each step (`phases`, candidate.Clock) both ways, and whether
  both ways reached the same outcome (status, rejection key and, for a valid task, the
  fail-to-pass, pass-to-pass, stub-passing and discriminating test lists).

Resumable: `--out` keeps the pipeline's work and one JSON per grading; a rerun skips
what is stored. Gradings run on `--workers` processes; `--skip-tamper REPO ...` leaves
the tamper run out for those repositories (recorded). Run (in the background, on a shared machine):

    nice -n 10 .venv/bin/python benchmarks/synth_yield.py --max-candidates 6 --compare 2

Writes benchmarks/results/synth_yield.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from etude.synth.candidate import Settings, process
from etude.synth.executor import map_unordered
from etude.synth.grade import grade, solved_workspace
from etude.synth.pipeline import candidate_job, synthesize
from etude.synth.tamper import TAMPERS, stub_answer

PACKAGES = (
    "boltons==24.1.0",
    "cachetools==5.5.0",
    "more-itertools==10.5.0",
    "toolz==1.0.0",
    "xmltodict==0.14.2",
    "inflection==0.5.1",
)
CACHE = Path.home() / ".cache" / "etude" / "sdists"
RESULT = Path(__file__).parent / "results" / "synth_yield.json"
OLD_WAY = {"shared_environment": False, "test_subsets": False, "quiet_failures": False}
# A valid candidate's outcome includes its test lists: both ways must split them alike.
OUTCOME_TESTS = ("fail_to_pass", "pass_to_pass", "stub_passing", "discriminating")


def download_sdists(packages: list[str]) -> list[Path]:
    """The sdists of `packages` ('name==version'), fetched once with pip into CACHE."""
    CACHE.mkdir(parents=True, exist_ok=True)
    found = []
    for spec in packages:
        name, version = spec.split("==")
        stem = f"{name.replace('-', '?')}-{version}.tar.gz"
        if not list(CACHE.glob(stem)):
            pip = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
            subprocess.run([*pip, "--quiet", "--dest", str(CACHE), spec], check=True)
        found.append(sorted(CACHE.glob(stem))[-1])
    return found


def _grade_task(task_dir: Path) -> dict:
    """Reference, untouched and always-equal grades of one task."""
    with tempfile.TemporaryDirectory() as tmp:
        solved = grade(task_dir, solved_workspace(task_dir, Path(tmp) / "solved"))
        cheat = grade(task_dir, stub_answer(task_dir, Path(tmp) / "cheat", "always_equal"))
    untouched = grade(task_dir, task_dir / "workspace")
    task = json.loads((task_dir / "task.json").read_text())
    return {
        "task": task_dir.name,
        "kind": task["feature_kind"],
        "reference": [solved["fraction"], solved["binary"]],
        "untouched": [untouched["fraction"], untouched["binary"]],
        "always_equal_answer": [cheat["fraction"], cheat["binary"]],
        "fail_to_pass": len(task["tests"]["fail_to_pass"]),
        "discriminating": len(task["tests"]["discriminating"]),
        "seconds": [solved["seconds"], untouched["seconds"], cheat["seconds"]],
    }


def _tamper_task(task_dir: Path) -> dict:
    """The stub answer's grade alone and with each tamper."""
    with tempfile.TemporaryDirectory() as tmp:
        answer = stub_answer(task_dir, Path(tmp) / "stub", "raise")
        alone = grade(task_dir, answer)
        scores = {}
        for name, tamper in sorted(TAMPERS.items()):
            ws = Path(tmp) / "tampered"
            subprocess.run(["rm", "-rf", str(ws)], check=True)
            subprocess.run(["cp", "-a", str(answer), str(ws)], check=True)
            tamper.apply(ws, task_dir)
            graded = grade(task_dir, ws)
            scores[name] = [graded["fraction"], graded["binary"]]
    stub = [alone["fraction"], alone["binary"]]
    ignored = {n: s[0] <= stub[0] and s[1] <= stub[1] for n, s in scores.items()}
    return {"task": task_dir.name, "stub": stub, "tampered": scores, "ignored": ignored}


def _leak_check(task_dir: Path) -> list[str]:
    """Oracle tokens found in the workspace by grep (raw files and git objects)."""
    task = json.loads((task_dir / "task.json").read_text())
    ws = task_dir / "workspace"
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as patterns:
        patterns.write("\n".join(task["oracle_tokens"]) + "\n")
        patterns.flush()
        raw = subprocess.run(
            ["grep", "-r", "-a", "-o", "-F", "-h", "-f", patterns.name, str(ws)],
            capture_output=True,
        ).stdout
        objects = subprocess.run(
            ["git", "-C", str(ws), "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
        ).stdout
        in_git = subprocess.run(
            ["grep", "-a", "-o", "-F", "-f", patterns.name],
            input=objects,
            capture_output=True,
        ).stdout
    return sorted({line.decode(errors="replace") for line in (raw + in_git).splitlines()})


def _records(directory: Path) -> list[dict]:
    """The candidate records stored in `directory` (or its results/ folder)."""
    if (directory / "results").is_dir():
        directory = directory / "results"
    return [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]


def _median(values) -> float | None:
    values = list(values)
    return round(statistics.median(values), 2) if values else None


def _grade_all(out: Path, summary: dict, workers: int, tamper_skipped: set[str]) -> None:
    """Grade every valid task and run the tamper corpus on each repository's first one
    (except in `tamper_skipped`), on `workers` processes; results are stored under
    out/grades and out/tamper (resumable)."""
    jobs = []
    for repo in summary["repositories"]:
        tasks = [out / "new" / "tasks" / t for t in repo["tasks"]]
        jobs += [("grades", t.name, t) for t in tasks]
        if tasks and repo["repository"] not in tamper_skipped:
            jobs.append(("tamper", repo["repository"], tasks[0]))
    jobs = [j for j in jobs if not (out / j[0] / f"{j[1]}.json").exists()]
    for (kind, name, _), value in map_unordered(_graded, jobs, executor="local", workers=workers):
        (out / kind).mkdir(parents=True, exist_ok=True)
        (out / kind / f"{name}.json").write_text(json.dumps(value, indent=2))


def _graded(job: tuple[str, str, Path]) -> dict:
    kind, _, task_dir = job
    return _grade_task(task_dir) if kind == "grades" else _tamper_task(task_dir)


def _cost_pairs(out: Path, summary: dict, count: int) -> None:
    """Process each repository's first `count` candidates both ways, back to back on one
    worker (alternating which goes first, so both see the same load): the pipeline's way
    and the old way (a fresh venv per candidate, every test file in every run). Records go
    to out/cost/<repo>/<candidate>.<way>.json (resumable); the staged tasks are dropped."""
    for repo in summary["repositories"]:
        work = out / "new" / "work" / repo["repository"]
        state = json.loads((work / "repo_state.json").read_text())
        for turn, cand in enumerate(state["candidates"][:count]):
            ways = [("new", Settings()), ("old", Settings(**OLD_WAY))]
            for way, settings in ways if turn % 2 == 0 else ways[::-1]:
                target = out / "cost" / repo["repository"] / f"{cand['id']}.{way}.json"
                if target.exists():
                    continue
                record = process(candidate_job(state, cand, work, settings))
                if record.get("task_dir"):
                    task = json.loads((Path(record["task_dir"]) / "task.json").read_text())
                    record["tests"] = {k: task["tests"][k] for k in OUTCOME_TESTS}
                    shutil.rmtree(record["task_dir"], ignore_errors=True)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(record, indent=2))


def _outcome(record: dict) -> tuple:
    """What a candidate's processing decided: status, rejection key, test lists."""
    return record["status"], record.get("reason_key"), record.get("tests")


def _phase_medians(records: list[dict]) -> dict[str, float]:
    """Median seconds per step (candidate.Clock) over `records`, a step missing from a
    record counting 0 (a rejection stops early; the shared environment makes no venv)."""
    steps = sorted({step for r in records for step in r.get("phases", {})})
    return {step: _median(r.get("phases", {}).get(step, 0.0) for r in records) for step in steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-candidates", type=int, default=6)
    parser.add_argument("--compare", type=int, default=2, help="candidates per repo, old way")
    default_out = Path.home() / ".cache" / "etude" / "synth_yield_run"
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES), help="name==version")
    parser.add_argument("--result", type=Path, default=RESULT)
    parser.add_argument("--skip-tamper", nargs="*", default=[], help="repositories")
    args = parser.parse_args()
    sources = download_sdists(args.packages)
    start = time.perf_counter()
    summary = synthesize(
        sources, args.out / "new", workers=args.workers, max_candidates=args.max_candidates
    )
    _cost_pairs(args.out, summary, args.compare)
    _grade_all(args.out, summary, args.workers, set(args.skip_tamper))
    synth_minutes = (time.perf_counter() - start) / 60
    repositories = []
    for repo in summary["repositories"]:
        name = repo["repository"]
        tasks = [args.out / "new" / "tasks" / t for t in repo["tasks"]]
        grades = [json.loads((args.out / "grades" / f"{t.name}.json").read_text()) for t in tasks]
        stored_tamper = args.out / "tamper" / f"{name}.json"
        tamper = json.loads(stored_tamper.read_text()) if stored_tamper.exists() else None
        leaks = {t.name: _leak_check(t) for t in tasks}
        new_records = {r["candidate"]: r for r in _records(args.out / "new" / "work" / name)}
        pairs = {}
        for path in sorted((args.out / "cost" / name).glob("*.json")):
            cand, way = path.name[: -len(".json")].rsplit(".", 1)
            pairs.setdefault(cand, {})[way] = json.loads(path.read_text())
        same = sorted(c for c, p in pairs.items() if {"new", "old"} <= set(p))
        cost = {
            "candidates": same,
            "old_median_s": _median(pairs[c]["old"]["seconds"] for c in same),
            "new_median_s": _median(pairs[c]["new"]["seconds"] for c in same),
            "same_outcome": [_outcome(pairs[c]["old"]) == _outcome(pairs[c]["new"]) for c in same],
            "outcomes": {c: pairs[c]["new"]["status"] for c in same},
            "old_phases_median_s": _phase_medians([pairs[c]["old"] for c in same]),
            "new_phases_median_s": _phase_medians([pairs[c]["new"] for c in same]),
        }
        if same:
            cost["new_over_old"] = round(cost["new_median_s"] / cost["old_median_s"], 3)
        repositories.append(
            {
                **{k: v for k, v in repo.items() if k != "rejected"},
                "rejected": repo["rejected"],
                "baseline_passes": repo["tests_kept"] > 0,
                "candidate_seconds_median": _median(r["seconds"] for r in new_records.values()),
                "grading": grades,
                "tamper": tamper,
                "leaking_tasks": sum(1 for found in leaks.values() if found),
                "leaks": {t: found for t, found in leaks.items() if found},
                "cost": cost,
            }
        )
    processed = sum(r["candidates"] for r in repositories)
    valid = sum(r["valid"] for r in repositories)
    ratios = [r["cost"]["new_over_old"] for r in repositories if "new_over_old" in r["cost"]]
    paired = {
        way: [
            json.loads((args.out / "cost" / r["repository"] / f"{c}.{way}.json").read_text())
            for r in repositories
            for c in r["cost"]["candidates"]
        ]
        for way in ("new", "old")
    }
    result = {
        "benchmark": "synth_yield",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "packages": args.packages,
        "workers": args.workers,
        "max_candidates": args.max_candidates,
        "compare": args.compare,
        "tamper_skipped": args.skip_tamper,
        "wall_minutes": round(synth_minutes, 2),
        "errors": summary["errors"],
        "totals": {
            "processed": processed,
            "valid": valid,
            "valid_share": round(valid / processed, 3) if processed else 0.0,
            "repositories_with_baseline": sum(r["baseline_passes"] for r in repositories),
            "repositories_with_a_task": sum(r["valid"] > 0 for r in repositories),
            "leaking_tasks": sum(r["leaking_tasks"] for r in repositories),
            "tampers_ignored": all(
                all(r["tamper"]["ignored"].values()) for r in repositories if r["tamper"]
            ),
            "new_over_old_median": statistics.median(ratios) if ratios else None,
            "same_outcome": all(all(r["cost"]["same_outcome"]) for r in repositories),
        },
        # Where a candidate's seconds go, median per step over every paired candidate.
        "phases_median_s": {way: _phase_medians(records) for way, records in paired.items()},
        "repositories": repositories,
    }
    args.result.parent.mkdir(parents=True, exist_ok=True)
    args.result.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["totals"], indent=2))
    print(f"wrote {args.result}")


if __name__ == "__main__":
    main()

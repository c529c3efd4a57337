"""Feature-deletion task synthesis on real code: yield, throughput, grading time, and leaks
left by a naive scrub versus etude's, side by side in one run.

Inputs: the sdists of `inflection` and `tabulate` (downloaded with `pip download
--no-binary :all: --no-deps`, which both include their test suites) and the example
repository that ships with etude. For each repository the full pipeline runs
(`etude.synth.pipeline.synthesize`, 2 workers, every candidate); per repository it
records candidates (by kind: function/class, method group, module), valid tasks,
rejection reasons, worker- and CPU-minutes, valid tasks per CPU-minute and yield (valid /
candidates processed). Every valid task is then graded three times, with the reference
solution (expected 1), untouched (expected 0) and an always-equal answer (every deleted
definition returns `unittest.mock.ANY`; expected binary 0 under the equality guard), and
the grading time recorded. Validation also scores the always-equal stub with the guard off,
which counts the tasks that exist only because of the guard (equality-only tests).

Side by side: before etude's scrub, each candidate's workspace and venv are copied and
scrubbed the naive way (`etude.synth.scrub.naive_scrub`: the deletion committed on top of
the history, `__pycache__` removed by a recursive glob), and the same audit runs on that
copy. Reported: the share of candidates whose naive-scrubbed copy leaks, by place.

Run: .venv/bin/python benchmarks/synth_yield.py   (writes benchmarks/results/synth_yield.json)
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
from collections import Counter
from pathlib import Path

from etude.synth.candidate import Settings
from etude.synth.delete import stub
from etude.synth.demo import EXAMPLE_REPO
from etude.synth.executor import map_unordered
from etude.synth.grade import grade, solved_workspace
from etude.synth.pipeline import synthesize

PACKAGES = ("inflection", "tabulate")
CACHE = Path.home() / ".cache" / "etude" / "sdists"
RESULT = Path(__file__).parent / "results" / "synth_yield.json"


def download_sdists() -> list[Path]:
    """The sdists of PACKAGES, fetched once with pip into ~/.cache/etude/sdists."""
    CACHE.mkdir(parents=True, exist_ok=True)
    found = {p: sorted(CACHE.glob(f"{p}-*.tar.gz")) for p in PACKAGES}
    missing = [p for p, files in found.items() if not files]
    if missing:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                "--dest",
                str(CACHE),
                *missing,
            ],
            check=True,
        )
    return [sorted(CACHE.glob(f"{p}-*.tar.gz"))[-1] for p in PACKAGES]


def _always_equal_answer(task_dir: Path, dest: Path) -> Path:
    """The task's workspace with the reference's deleted definitions stubbed to return
    `unittest.mock.ANY` (an object equal to everything)."""
    task = json.loads((task_dir / "task.json").read_text())
    shutil.copytree(task_dir / "workspace", dest)
    names = [e["name"] for e in task["deleted"] if e["kind"] != "module"]
    for rel in task["modified_files"]:
        reference = (task_dir / "hidden" / "reference" / rel).read_text()
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(stub(reference, names, "always_equal"))
    return dest


def _grade_task(task_dir: str) -> dict:
    """Grade one task three times: reference solution, untouched, always-equal answer."""
    task_dir = Path(task_dir)
    with tempfile.TemporaryDirectory() as tmp:
        solved = grade(task_dir, solved_workspace(task_dir, Path(tmp) / "solved"))
        cheat = grade(task_dir, _always_equal_answer(task_dir, Path(tmp) / "cheat"))
    untouched = grade(task_dir, task_dir / "workspace")
    task = json.loads((task_dir / "task.json").read_text())
    unguarded = task["validation"].get("unguarded_stub_always_equal", {})
    return {
        "task": task_dir.name,
        "kind": task["feature_kind"],
        "reference": {"fraction": solved["fraction"], "binary": solved["binary"]},
        "untouched": {"fraction": untouched["fraction"], "binary": untouched["binary"]},
        "always_equal_answer": {
            "fraction": cheat["fraction"],
            "binary": cheat["binary"],
            "fail_to_pass_passed": cheat["fail_to_pass_passed"],
        },
        # Fail-to-pass tests, and those every trivial stub passes (left out of `fraction`).
        "fail_to_pass": len(task["tests"]["fail_to_pass"]),
        "stub_passing": len(task["tests"]["stub_passing"]),
        # Validation's score of the always-equal stub with the guard off: 1.0 means the
        # task's tests alone cannot tell it from a solution (the guard makes the task).
        "always_equal_unguarded_fraction": unguarded.get("fraction"),
        "seconds": [solved["seconds"], untouched["seconds"], cheat["seconds"]],
    }


def _grading(out: Path, task_names: list[str], workers: int) -> list[dict]:
    jobs = [str(out / "tasks" / name) for name in task_names]
    rows = [row for _, row in map_unordered(_grade_task, jobs, executor="local", workers=workers)]
    return sorted(rows, key=lambda r: r["task"])


def _records(out: Path, repo: str) -> list[dict]:
    results = out / "work" / repo / "results"
    return [json.loads(p.read_text()) for p in sorted(results.glob("*.json"))]


def _always_equal_only(records: list[dict]) -> int:
    """Rejected only because the always-equal stub passed (reference and others fine)."""
    count = 0
    for r in records:
        checks = r.get("validation", {})
        if r["status"] == "rejected" and "stub_always_equal passes" in r["reason"]:
            others = [
                v for k, v in checks.items() if k.startswith("stub_") and k != "stub_always_equal"
            ]
            if checks.get("reference", {}).get("binary") == 1 and all(
                v["fraction"] < 1 for v in others
            ):
                count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None, help="keep the tasks here (default: temporary)")
    args = parser.parse_args()
    sources = [*download_sdists(), EXAMPLE_REPO]
    out = Path(args.out or tempfile.mkdtemp(prefix="etude-synth-bench-"))
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    settings = Settings(compare_naive=True, measure_guard=True)
    summary = synthesize(sources, out, workers=args.workers, settings=settings)
    synth_minutes = (time.perf_counter() - start) / 60
    repositories = []
    for repo in summary["repositories"]:
        records = _records(out, repo["repository"])
        naive = [r["naive_scrub_leaks"] for r in records if "naive_scrub_leaks" in r]
        etude_leaks = [r for r in records if r.get("reason", "").startswith("leak")]
        grading = _grading(out, repo["tasks"], args.workers)
        seconds = [s for g in grading for s in g["seconds"]]
        repositories.append(
            {
                **{k: v for k, v in repo.items() if k != "rejected"},
                "rejected": repo["rejected"],
                "rejected_only_by_always_equal_stub": _always_equal_only(records),
                "valid_only_with_equality_guard": sum(
                    g["always_equal_unguarded_fraction"] == 1.0 for g in grading
                ),
                "candidate_seconds_median": statistics.median(r["wall_s"] for r in records)
                if records
                else None,
                "naive_scrub": {
                    "audited": len(naive),
                    "leaking": sum(1 for n in naive if n),
                    "places": dict(Counter(p for n in naive for p in n).most_common()),
                },
                "etude_scrub": {"audited": len(naive), "leaking": len(etude_leaks)},
                "grading": grading,
                "grading_seconds_median": statistics.median(seconds) if seconds else None,
            }
        )
    result = {
        "benchmark": "synth_yield",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "workers": args.workers,
        "wall_minutes": round(synth_minutes, 2),
        "errors": summary["errors"],
        "repositories": repositories,
    }
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2) + "\n")
    for repo in repositories:
        print(
            f"{repo['repository']}: {repo['valid']}/{repo['candidates']} valid, "
            f"{repo['cpu_minutes']} CPU-min, naive scrub leaks "
            f"{repo['naive_scrub']['leaking']}/{repo['naive_scrub']['audited']}, "
            f"grading median {repo['grading_seconds_median']} s"
        )
    print(f"wrote {RESULT}")


if __name__ == "__main__":
    main()

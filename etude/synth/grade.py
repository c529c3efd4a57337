"""Grading a candidate workspace against a task's hidden tests (`etude grade TASK WORKSPACE`).

The workspace is copied into a fresh directory; every test file (and everything else in
test directories), conftest.py, pytest or packaging configuration, sitecustomize/
usercustomize and .pth file in it, at any depth, is discarded with package metadata
directories (.dist-info, .egg-info) and links to directories, and the hidden store's tests
and configuration are put back, so edits to tests or test configuration do not count.
pytest then runs with only that configuration and the task's recorded plugins (see
testrun.run_suite: `-c`, fixed rootdir, autoloading off, the working directory off
`sys.path`). A fresh venv is built from the task's pinned requirements (the
agent's environment is not trusted either), and the fail-to-pass and pass-to-pass tests
run in the sandbox with a time limit, with the task's equality guard on (a test fails when
a deleted public function, method or class returns an always-equal object; the plugin is
loaded from etude's tree, not the workspace).

Reward: `fraction` is the share of fail-to-pass tests that pass, counting only those a
trivial stub fails (`tests.stub_passing` in task.json lists the others: tests that fail
before the feature is back only because their file imports a deleted name, which any stub
passes, so they would hand a stub most of the reward); `binary` is 1 when every
fail-to-pass and every pass-to-pass test passes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from etude.sandbox import Limits
from etude.synth import env
from etude.synth.discover import CONFIG_FILES, is_test_path
from etude.synth.errors import SynthError
from etude.synth.task import load_task, verify_hidden
from etude.synth.testrun import Outcome, SuiteRun, files_of, run_suite

IGNORED_ON_COPY = (".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache")
_STARTUP_HOOKS = ("sitecustomize.py", "usercustomize.py")
_METADATA_DIRS = (".dist-info", ".egg-info")


def _discarded(rel: str) -> bool:
    """Whether a workspace file is replaced by the hidden store or never trusted: test
    files and everything in test directories (data included), conftest.py, pytest and
    packaging configuration, interpreter startup hooks and .pth files, at any depth."""
    name = rel.rsplit("/", 1)[-1]
    return (
        is_test_path(rel) or name in CONFIG_FILES or name in _STARTUP_HOOKS or name.endswith(".pth")
    )


def prepare_workspace(source: Path, dest: Path, hidden: Path) -> None:
    """Copy `source` to `dest`, discard what the grader does not take from a workspace
    (`_discarded` files, package metadata directories, whose entry points could register
    pytest plugins, and symbolic links to directories) and put back the hidden store's
    tests and configuration (`hidden/tests`, `hidden/config`)."""
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED_ON_COPY))
    for dirpath, dirnames, filenames in os.walk(dest):
        here = Path(dirpath)
        for name in list(dirnames):
            path = here / name
            if path.is_symlink():
                dirnames.remove(name)
                path.unlink()
            elif name.endswith(_METADATA_DIRS):
                dirnames.remove(name)
                shutil.rmtree(path)
        for name in filenames:
            path = here / name
            if _discarded(path.relative_to(dest).as_posix()):
                path.unlink()
    for part in ("tests", "config"):
        if (hidden / part).is_dir():
            shutil.copytree(hidden / part, dest, dirs_exist_ok=True)


def score(
    suite: SuiteRun,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    stub_passing: Iterable[str] = (),
) -> dict:
    """The reward and per-test outcomes of one run. `fraction` counts the fail-to-pass tests
    not in `stub_passing` (all of them when that would leave none)."""
    f2p = {t: suite.outcome_of(t) for t in fail_to_pass}
    p2p = {t: suite.outcome_of(t) for t in pass_to_pass}
    f2p_passed = sum(o.outcome == "passed" for o in f2p.values())
    p2p_passed = sum(o.outcome == "passed" for o in p2p.values())
    counted = [t for t in f2p if t not in set(stub_passing)] or list(f2p)
    counted_passed = sum(f2p[t].outcome == "passed" for t in counted)
    return {
        "fraction": counted_passed / len(counted) if counted else 0.0,
        "binary": int(f2p_passed == len(f2p) and p2p_passed == len(p2p) and bool(f2p)),
        "fail_to_pass_passed": f2p_passed,
        "fail_to_pass_counted": len(counted),
        "pass_to_pass_passed": p2p_passed,
        "tests": {
            t: {
                "set": "fail_to_pass" if t in f2p else "pass_to_pass",
                "outcome": o.outcome,
                "message": o.message[:300],
            }
            for t, o in {**f2p, **p2p}.items()
        },
    }


def grade(task_dir: Path, workspace: Path, *, time_limit_s: float = 600.0) -> dict:
    """Grade `workspace` against the task in `task_dir`; returns the reward record."""
    task_dir, workspace = Path(task_dir).resolve(), Path(workspace).resolve()
    task = load_task(task_dir)
    if not workspace.is_dir():
        raise SynthError(f"workspace {workspace} is not a directory")
    verify_hidden(task_dir, task)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="etude-grade-") as tmp:
        dest = Path(tmp) / "workspace"
        prepare_workspace(workspace, dest, task_dir / "hidden")
        venv = Path(tmp) / "venv"
        requirements = (task_dir / "hidden" / "requirements.txt").read_text().split()
        tests = task["tests"]
        try:
            env.create(dest, venv, requirements=requirements)
        except SynthError as err:  # the answer breaks the install (a setup.py importing it)
            return _not_installed(task, str(err), time.perf_counter() - start)
        suite = run_suite(
            dest,
            venv,
            files_of(tests["fail_to_pass"] + tests["pass_to_pass"]),
            test_timeout_s=task["limits"]["test_timeout_s"],
            limits=Limits(wall_s=time_limit_s),
            cache=False,
            equality_guard=task.get("equality_guard", {}).get("targets", []),
            plugins=task.get("pytest", {}).get("plugins", env.TOOL_PLUGINS),
        )
        result = score(
            suite, tests["fail_to_pass"], tests["pass_to_pass"], tests.get("stub_passing", [])
        )
    result |= {"task": task["id"], "seconds": round(time.perf_counter() - start, 2)}
    if suite.process.timed_out:
        result["note"] = f"the test run hit the {time_limit_s:g} s time limit"
    return result


def _not_installed(task: dict, error: str, seconds: float) -> dict:
    """The reward record of a workspace that does not install: every test failed."""
    tests = task["tests"]
    failed = Outcome("failed", "install", f"the workspace does not install: {error}")
    suite = SuiteRun({t: failed for t in tests["fail_to_pass"] + tests["pass_to_pass"]}, {}, None)
    result = score(
        suite, tests["fail_to_pass"], tests["pass_to_pass"], tests.get("stub_passing", [])
    )
    note = f"the workspace does not install: {error[-300:]}"
    return result | {"task": task["id"], "seconds": round(seconds, 2), "note": note}


def solved_workspace(task_dir: Path, dest: Path) -> Path:
    """A copy of the task's workspace with the reference solution restored (should score 1)."""
    task_dir = Path(task_dir)
    shutil.copytree(task_dir / "workspace", dest, symlinks=True)
    shutil.copytree(task_dir / "hidden" / "reference", dest, dirs_exist_ok=True)
    return Path(dest)


def main(task: str, workspace: str, out: str | None, time_limit_s: float) -> int:
    """`etude grade`: print the reward JSON (and write it to `out`); exit 0 when graded."""
    result = grade(Path(task), Path(workspace), time_limit_s=time_limit_s)
    text = json.dumps(result, indent=2)
    if out:
        Path(out).write_text(text + "\n")
    print(text)
    return 0

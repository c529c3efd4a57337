"""The untouched repository's suite: which tests pass reliably, and what each one runs.

The suite runs twice, once under coverage with per-test contexts and once plainly. A test
is kept when it passes both times and each run took at most `slow_test_s`; the others are
dropped with a reason (failing, skipped, flaky, slow).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from etude.sandbox import Limits
from etude.synth import env, imports
from etude.synth.coverage import LineMap, run_with_contexts
from etude.synth.discover import Repo, module_name
from etude.synth.errors import SynthError
from etude.synth.testrun import run_suite


@dataclass
class Baseline:
    """Kept test node ids, dropped ones with reasons, the line map, extras installed, pinned
    requirements, the pytest plugins the environment installs (env.pytest_plugins) and the
    package modules that import (imports.importable)."""

    kept: list[str]
    dropped: dict[str, str]
    lines: LineMap
    extras: tuple[str, ...]
    requirements: list[str]
    plugins: list[str]
    importable: list[str]
    seconds: float


def test_extras(repo: Repo) -> tuple[str, ...]:
    """Optional-dependency groups that hold test requirements (pyproject.toml)."""
    pyproject = repo.root / "pyproject.toml"
    if not pyproject.exists():
        return ()
    import tomllib

    try:
        extras = tomllib.loads(pyproject.read_text()).get("project", {})
    except tomllib.TOMLDecodeError as err:
        raise SynthError(f"{repo.name}: pyproject.toml does not parse: {err}") from err
    groups = extras.get("optional-dependencies", {})
    return tuple(g for g in ("test", "tests", "testing") if g in groups)


def keep_generated_sources(repo: Repo, workspace: Path) -> None:
    """Copy into the pristine repository the files the install wrote into its packages
    (a setuptools_scm `_version.py`, say): candidates run with this venv and their own
    copy of the pristine tree first on the path, so they must find them there too."""
    prefix = f"{repo.package_root}/" if repo.package_root else ""
    for package in repo.packages:
        base = workspace / prefix / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(workspace).as_posix()
            if path.is_file() and "__pycache__" not in rel and not (repo.root / rel).exists():
                (repo.root / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, repo.root / rel)


def establish(
    repo: Repo,
    work_dir: Path,
    *,
    slow_test_s: float = 5.0,
    test_timeout_s: float = 20.0,
    suite_timeout_s: float = 300.0,
) -> Baseline:
    """Install the repository in a fresh venv, run its suite twice, map tests to lines."""
    workspace = Path(work_dir) / "base" / "workspace"
    venv = Path(work_dir) / "base" / "venv"
    shutil.rmtree(workspace.parent, ignore_errors=True)
    shutil.copytree(repo.root, workspace, symlinks=True)
    extras = test_extras(repo)
    env.create(workspace, venv, extras=extras)
    keep_generated_sources(repo, workspace)
    plugins = env.pytest_plugins(workspace, venv)
    modules = [module_name(repo, rel) for rel in repo.source_files]
    importable = imports.importable(workspace, venv, modules)
    limits = Limits(wall_s=suite_timeout_s)
    suite = dict(test_timeout_s=test_timeout_s, limits=limits, plugins=plugins)
    first, lines = run_with_contexts(repo, workspace, venv, **suite)
    second = run_suite(workspace, venv, **suite)
    if second.process.timed_out:
        raise SynthError(f"{repo.name}: the test suite did not finish in {suite_timeout_s:g} s")
    kept, dropped = [], {}
    for nodeid in sorted(set(first.tests) | set(second.tests)):
        a, b = first.outcome_of(nodeid), second.outcome_of(nodeid)
        if a.outcome == b.outcome == "passed":
            if max(a.seconds, b.seconds) > slow_test_s:
                dropped[nodeid] = f"slow (over {slow_test_s:g} s)"
            else:
                kept.append(nodeid)
        elif "passed" in (a.outcome, b.outcome):
            dropped[nodeid] = "flaky (passed once in two runs)"
        else:
            dropped[nodeid] = f"{a.outcome} before any deletion"
    if not kept:
        why = first.process.describe() if not first.tests else "every test fails or is skipped"
        raise SynthError(f"{repo.name}: no test passes reliably before any deletion ({why})")
    seconds = first.process.seconds + second.process.seconds
    requirements = env.freeze(workspace, venv)
    return Baseline(kept, dropped, lines, extras, requirements, plugins, importable, seconds)

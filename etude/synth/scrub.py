"""Scrubbing a task workspace and its environment of everything that could hold deleted code.

Removed, across every directory including dot-directories (os.walk, never a glob):
bytecode, type-checker/linter/test caches, coverage data, build and install artifacts,
leftover diffs and editor backups, nested VCS directories, and any non-editable installed
copy of the package in the environment. Git history is replaced by one fresh commit with
no reflog and no other refs or objects.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from etude.sandbox import Limits, run
from etude.synth.errors import SynthError

ARTIFACT_DIRS = frozenset(
    {
        "__pycache__",
        ".mypy_cache",
        ".dmypy",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".pyre",
        ".pytype",
        ".tox",
        ".nox",
        ".eggs",
        "htmlcov",
        ".ipynb_checkpoints",
        ".git",
        ".hg",
        ".svn",
    }
)
ROOT_ONLY_DIRS = frozenset({"build", "dist", ".cache"})  # a package may own a `build/`
ARTIFACT_FILES = (
    "*.pyc",
    "*.pyo",
    ".coverage",
    ".coverage.*",
    "coverage.xml",
    "coverage.json",
    ".dmypy.json",
    "*.orig",
    "*.rej",
    "*.diff",
    "*.patch",
    "*.swp",
    "*~",
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "etude",
    "GIT_AUTHOR_EMAIL": "etude@localhost",
    "GIT_COMMITTER_NAME": "etude",
    "GIT_COMMITTER_EMAIL": "etude@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


_GIT_LIMITS = Limits(wall_s=300, output_bytes=256 << 20)


@dataclass
class ScrubLog:
    """Paths removed (relative to their root) and what was done to git."""

    removed: list[str] = field(default_factory=list)
    git: list[str] = field(default_factory=list)


def _is_artifact_dir(name: str, at_root: bool) -> bool:
    return (
        name in ARTIFACT_DIRS or name.endswith(".egg-info") or (at_root and name in ROOT_ONLY_DIRS)
    )


def remove_artifacts(root: Path, log: ScrubLog, label: str) -> None:
    """Delete artifact directories and files anywhere under `root`."""
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in list(dirnames):
            if _is_artifact_dir(name, here == root):
                shutil.rmtree(here / name)
                log.removed.append(f"{label}/{(here / name).relative_to(root)}/")
                dirnames.remove(name)
        for name in filenames:
            if any(fnmatch(name, pattern) for pattern in ARTIFACT_FILES):
                (here / name).unlink()
                log.removed.append(f"{label}/{(here / name).relative_to(root)}")


def git(workspace: Path, *args: str) -> str:
    """Run git in `workspace`, in the sandbox (a repository's own .git/config can name
    commands: filters, fsmonitor), with a fixed identity and date, no hooks and no user or
    system configuration; returns stdout, raises SynthError on failure."""
    argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args]
    done = run(argv, Path(workspace), env=GIT_ENV, limits=_GIT_LIMITS)
    if not done.ok:
        raise SynthError(f"git {' '.join(args)} failed in {workspace}: {done.describe()}")
    return done.stdout


def fresh_history(workspace: Path, log: ScrubLog) -> None:
    """Replace any history by a single commit of the current tree on `main`, no reflog."""
    git(workspace, "init", "--quiet", "--initial-branch=main")
    git(workspace, "add", "--all", "--force")
    git(workspace, "commit", "--quiet", "--no-verify", "-m", "Task workspace")
    shutil.rmtree(workspace / ".git" / "logs", ignore_errors=True)
    for sample in (workspace / ".git" / "hooks").glob("*"):
        sample.unlink()
    reachable = git(workspace, "rev-list", "--objects", "--all").split("\n")
    stored = git(workspace, "cat-file", "--batch-all-objects", "--batch-check").split("\n")
    refs = git(workspace, "for-each-ref", "--format=%(refname)").split()
    if len([r for r in reachable if r]) != len([s for s in stored if s]) or refs != [
        "refs/heads/main"
    ]:
        raise SynthError(f"fresh git history in {workspace} holds more than one commit's objects")
    log.git.append(f"one commit on refs/heads/main, {len(stored) - 1} objects, no reflog")


def remove_installed_copies(venv: Path, packages: list[str], log: ScrubLog) -> None:
    """Delete non-editable copies of the task's packages from the venv's site-packages."""
    for site in Path(venv).glob("lib/python*/site-packages"):
        for name in packages:
            for copy in (site / name, site / f"{name}.py"):
                if copy.is_dir():
                    shutil.rmtree(copy)
                elif copy.exists():
                    copy.unlink()
                else:
                    continue
                log.removed.append(f"venv/{copy.relative_to(venv)} (installed copy)")


def scrub(workspace: Path, venv: Path | None, packages: list[str]) -> ScrubLog:
    """Scrub `workspace` (and `venv` when given), then give the workspace fresh history."""
    log = ScrubLog()
    remove_artifacts(workspace, log, "workspace")
    if venv is not None:
        remove_installed_copies(venv, packages, log)
        remove_artifacts(venv, log, "venv")
    fresh_history(Path(workspace), log)
    return log

"""Running a repository's pytest suite in the sandbox and reading per-test outcomes.

Outcomes come from the `etude_outcomes` plugin (etude/synth/plugin), which the sandboxed
pytest loads from PYTHONPATH; with `equality_guard` targets, the `etude_equality_guard`
plugin from the same directory fails tests in which a target returns an always-equal
object. Tests of a file that failed to import are absent from
pytest's reports; `outcome_of` turns them into failures carrying the collection error.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from etude.sandbox import Completed, Limits, run
from etude.synth.env import python_of

PLUGIN_DIR = Path(__file__).parent / "plugin"
SUITE_LIMITS = Limits(wall_s=600)


@dataclass(frozen=True)
class Outcome:
    """One test's result: outcome is 'passed', 'failed' or 'skipped'; phase is where it
    failed ('setup', 'call', 'teardown', 'collect')."""

    outcome: str
    phase: str = ""
    message: str = ""
    text: str = ""
    seconds: float = 0.0


@dataclass
class SuiteRun:
    """Outcomes of one pytest run, keyed by node id, plus collection errors by file."""

    tests: dict[str, Outcome]
    collect_errors: dict[str, str]
    process: Completed
    notes: list[str] = field(default_factory=list)

    def outcome_of(self, nodeid: str) -> Outcome:
        """The outcome of `nodeid`; a test that never ran failed at collection."""
        if nodeid in self.tests:
            return self.tests[nodeid]
        path = nodeid.split("::", 1)[0]
        error = self.collect_errors.get(path, "")
        if not error and self.process.timed_out:
            return Outcome("failed", "collect", "the test run timed out")
        message = error.strip().splitlines()[-1] if error.strip() else "not collected"
        return Outcome("failed", "collect", message, error)


def files_of(nodeids: Iterable[str]) -> list[str]:
    """The test files (relative paths) holding `nodeids`, sorted."""
    return sorted({t.split("::", 1)[0] for t in nodeids})


def run_suite(
    workspace: Path,
    venv: Path,
    files: Sequence[str] = (),
    *,
    test_timeout_s: float = 30.0,
    limits: Limits = SUITE_LIMITS,
    extra_args: Sequence[str] = (),
    pythonpath: Sequence[Path] = (),
    cache: bool = True,
    writable: Sequence[Path] = (),
    equality_guard: Sequence[str] = (),
) -> SuiteRun:
    """Run pytest on `files` (all tests when empty) inside `workspace` with `venv`.

    `pythonpath` entries come before the editable install, which lets a copy of the
    workspace be tested with the original's venv. `cache=False` keeps pytest from writing
    .pytest_cache (used when grading). `equality_guard` lists "module:qualname" targets
    for the equality guard plugin (none: the plugin is not loaded).
    """
    workspace = Path(workspace).resolve()
    with tempfile.TemporaryDirectory(prefix="etude-outcomes-") as tmp:
        report = Path(tmp) / "outcomes.json"
        argv = [str(python_of(venv)), "-m", "pytest", "-q", "--no-header", "-p", "etude_outcomes"]
        argv += [f"--timeout={test_timeout_s:g}"]  # pytest-timeout, installed with the tools
        argv += ["--continue-on-collection-errors", "-o", "console_output_style=classic"]
        if not cache:
            argv += ["-p", "no:cacheprovider"]
        if equality_guard:
            argv += ["-p", "etude_equality_guard"]
        argv += [*extra_args, *files]
        paths = [str(Path(p).resolve()) for p in pythonpath] + [str(PLUGIN_DIR)]
        env = {"ETUDE_OUTCOMES": str(report), "PYTHONPATH": ":".join(paths)}
        if equality_guard:
            env["ETUDE_EQUALITY_GUARD"] = json.dumps(list(equality_guard))
        done = run(argv, workspace, writable=[Path(tmp), venv, *writable], env=env, limits=limits)
        if not report.exists():
            return SuiteRun({}, {}, done, notes=[f"pytest wrote no report: {done.describe()}"])
        data = json.loads(report.read_text())
    tests = {k: Outcome(**v) for k, v in data["tests"].items()}
    return SuiteRun(tests, data["collect_errors"], done)

"""Which tests execute which lines: coverage.py with one dynamic context per test.

pytest-cov's `--cov-context=test` switches the coverage context at each test, and the JSON
report with `show_contexts` lists, per line, the node ids that ran it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

from etude.sandbox import Limits
from etude.synth.discover import Repo
from etude.synth.errors import SynthError
from etude.synth.testrun import SuiteRun, run_suite

LineMap = dict[str, dict[int, set[str]]]  # source file (relative) -> line -> test node ids


def run_with_contexts(
    repo: Repo,
    workspace: Path,
    venv: Path,
    *,
    test_timeout_s: float,
    limits: Limits,
    plugins: Sequence[str],
) -> tuple[SuiteRun, LineMap]:
    """Run the whole suite under coverage (`plugins` must hold pytest-cov's); returns the
    run and the per-line test map."""
    with tempfile.TemporaryDirectory(prefix="etude-cov-") as tmp:
        rc = Path(tmp) / "coveragerc"
        report = Path(tmp) / "coverage.json"
        rc.write_text(f"[run]\ndata_file = {tmp}/.coverage\n\n[json]\nshow_contexts = True\n")
        args = [f"--cov={name}" for name in repo.packages]
        args += [f"--cov-config={rc}", "--cov-context=test", f"--cov-report=json:{report}"]
        suite = run_suite(
            workspace,
            venv,
            test_timeout_s=test_timeout_s,
            limits=limits,
            extra_args=args,
            writable=[Path(tmp)],
            plugins=plugins,
        )
        if suite.process.timed_out:
            raise SynthError(f"{repo.name}: the test suite did not finish in {limits.wall_s:g} s")
        if not report.exists():
            raise SynthError(f"coverage wrote no report: {suite.process.describe()}")
        data = json.loads(report.read_text())
    return suite, line_map(data, workspace)


def line_map(report: dict, workspace: Path) -> LineMap:
    """Per-line node ids from a coverage JSON report ('nodeid|run' contexts)."""
    lines: LineMap = {}
    for filename, entry in report["files"].items():
        path = Path(filename)
        rel = path.relative_to(workspace).as_posix() if path.is_absolute() else path.as_posix()
        per_line = lines.setdefault(rel, {})
        for lineno, contexts in entry.get("contexts", {}).items():
            tests = {c.rsplit("|", 1)[0] for c in contexts if c}
            if tests:
                per_line[int(lineno)] = tests
    return lines


def tests_covering(lines: LineMap, rel: str, first: int, last: int) -> set[str]:
    """Node ids that ran any line of `rel` between `first` and `last` (inclusive)."""
    per_line = lines.get(rel, {})
    found: set[str] = set()
    for lineno in range(first, last + 1):
        found |= per_line.get(lineno, set())
    return found

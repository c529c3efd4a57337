"""Running a repository's pytest suite in the sandbox and reading per-test outcomes.

Outcomes come from the `etude_outcomes` plugin (etude/synth/plugin), which the sandboxed
pytest loads from PYTHONPATH, with `etude_parse_cache` (failure reports parse each source
file once instead of once per frame: the same text, seconds sooner on large files); with
`equality_guard` targets, the `etude_equality_guard` plugin from the same directory fails
tests in which a target returns an always-equal object. Tests of a file that failed to
import are absent from pytest's reports; `outcome_of` turns them into failures carrying
the collection error.

What pytest reads is pinned, so that only the workspace root's configuration (when
grading: the hidden store's) decides how tests run: `-c` names the configuration file
pytest would pick at the root (`pytest_config`; an empty one when there is none),
`--rootdir` and `--confcutdir` are the workspace, plugin autoloading is off
(PYTEST_DISABLE_PLUGIN_AUTOLOAD) and the plugins the environment installs are loaded by
module name with `-p` (`plugins`, recorded at the baseline), and `python -P` keeps the
working directory off `sys.path`, so a module in the workspace cannot stand in for pytest
or a plugin. The sandbox passes no variable of the caller's environment.
"""

from __future__ import annotations

import json
import re
import tempfile
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from etude.sandbox import Completed, Limits, run
from etude.synth.discover import PYTEST_CONFIG_FILES
from etude.synth.env import TOOL_PLUGINS, python_of

PLUGIN_DIR = Path(__file__).parent / "plugin"
SUITE_LIMITS = Limits(wall_s=600)
_INI_SECTION = {"tox.ini": "pytest", "setup.cfg": "tool:pytest"}


def pytest_config(root: Path) -> str | None:
    """The configuration file pytest uses when run on tests under `root` with nothing
    closer: the first of PYTEST_CONFIG_FILES at `root` that configures pytest (a
    `pytest.ini`/`pytest.toml` always does), relative to `root`; None when there is none."""
    for name in PYTEST_CONFIG_FILES:
        path = Path(root) / name
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if name.startswith(("pytest.", ".pytest.")):
            return name
        if name == "pyproject.toml":
            try:
                if "pytest" in tomllib.loads(text).get("tool", {}):
                    return name
            except tomllib.TOMLDecodeError:
                continue
        elif re.search(rf"^\[{re.escape(_INI_SECTION[name])}\]\s*$", text, re.MULTILINE):
            return name
    return None


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
    plugins: Sequence[str] = TOOL_PLUGINS,
    venv_writable: bool = True,
) -> SuiteRun:
    """Run pytest on `files` (all tests when empty) inside `workspace` with `venv`.

    `pythonpath` entries come after etude's plugin directory and before the editable
    install, which lets a copy of the workspace be tested with the original's venv.
    `cache=False` keeps pytest from writing .pytest_cache (used when grading).
    `equality_guard` lists "module:qualname" targets for the equality guard plugin (none:
    the plugin is not loaded). `plugins` are the pytest plugin modules to load (autoloading
    is off; see env.pytest_plugins); pytest-timeout must be among them.
    `venv_writable=False` mounts `venv` read-only (a venv shared by several runs).
    """
    workspace = Path(workspace).resolve()
    with tempfile.TemporaryDirectory(prefix="etude-outcomes-") as tmp:
        report = Path(tmp) / "outcomes.json"
        config = pytest_config(workspace)
        if config is None:
            (Path(tmp) / "pytest.ini").write_text("[pytest]\n")
        argv = [str(python_of(venv)), "-P", "-m", "pytest", "-q", "--no-header"]
        argv += ["-c", str(workspace / config) if config else str(Path(tmp) / "pytest.ini")]
        argv += [f"--rootdir={workspace}", f"--confcutdir={workspace}"]
        argv += ["-p", "etude_outcomes", "-p", "etude_parse_cache"]
        argv += [a for p in plugins for a in ("-p", p)]
        argv += [f"--timeout={test_timeout_s:g}"]  # pytest-timeout, installed with the tools
        argv += ["--continue-on-collection-errors", "-o", "console_output_style=classic"]
        if not cache:
            argv += ["-p", "no:cacheprovider"]
        if equality_guard:
            argv += ["-p", "etude_equality_guard"]
        argv += [*extra_args, *files]
        paths = [str(PLUGIN_DIR), *(str(Path(p).resolve()) for p in pythonpath)]
        env = {
            "ETUDE_OUTCOMES": str(report),
            "PYTHONPATH": ":".join(paths),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        if equality_guard:
            env["ETUDE_EQUALITY_GUARD"] = json.dumps(list(equality_guard))
        writable = [Path(tmp), *([venv] if venv_writable else []), *writable]
        readonly = [] if venv_writable else [venv]
        done = run(argv, workspace, writable=writable, readonly=readonly, env=env, limits=limits)
        if not report.exists():
            return SuiteRun({}, {}, done, notes=[f"pytest wrote no report: {done.describe()}"])
        data = json.loads(report.read_text())
    tests = {k: Outcome(**v) for k, v in data["tests"].items()}
    return SuiteRun(tests, data["collect_errors"], done)

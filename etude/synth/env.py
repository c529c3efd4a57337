"""Per-workspace virtual environments, created with uv inside the sandbox.

Each candidate workspace gets its own isolated venv with the project installed editable
(so the venv points at the workspace and holds no copy of the code) plus the test tools.
uv's package cache lives outside every workspace (`uv_cache_dir()`), so a second venv of
the same repository installs from local files in about a second.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path

from etude.sandbox import Completed, Limits, run
from etude.synth.errors import SynthError

TEST_TOOLS = ("pytest>=7", "pytest-cov>=5", "pytest-timeout>=2.2")
# The plugin modules etude's own test runs need (pytest's autoloading is off, see testrun).
TOOL_PLUGINS = ("pytest_timeout",)
INSTALL_LIMITS = Limits(wall_s=600)


def uv_binary() -> str:
    """The uv executable: next to this interpreter (installed with etude) or on PATH."""
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.exists() else shutil.which("uv")
    if not found:
        raise FileNotFoundError("uv is not installed; `pip install uv` into etude's environment")
    return found


def uv_cache_dir() -> Path:
    """uv's package cache, shared by all environments and never inside a workspace."""
    default = Path.home() / ".cache" / "etude" / "uv"
    path = Path(os.environ.get("ETUDE_UV_CACHE", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


_NETWORK_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


def _uv(args: list[str], workspace: Path, writable: list[Path], limits: Limits) -> Completed:
    # The sandbox does not inherit the environment; pass on what reaching the index needs
    # (certificates, proxies, uv's own settings) and nothing else.
    env = {
        k: v
        for k, v in os.environ.items()
        if k.upper() in _NETWORK_VARS or (k.startswith("UV_") and k != "UV_CACHE_DIR")
    }
    env |= {"UV_CACHE_DIR": str(uv_cache_dir()), "UV_NO_PROGRESS": "1", "UV_LINK_MODE": "copy"}
    return run(
        [uv_binary(), *args],
        workspace,
        writable=[*writable, uv_cache_dir()],
        network=True,  # installs fetch from the package index; tests never get network
        env=env,
        limits=limits,
    )


def create(
    workspace: Path,
    venv: Path,
    *,
    extras: tuple[str, ...] = (),
    requirements: list[str] | None = None,
    limits: Limits = INSTALL_LIMITS,
) -> None:
    """Create `venv` and install the project in `workspace` editable, with its `extras`,
    the pinned `requirements` (if given) and the test tools; raises on failure."""
    venv = Path(venv).resolve()
    venv.parent.mkdir(parents=True, exist_ok=True)
    python = sys._base_executable  # the real interpreter, not etude's venv wrapper
    made = _uv(["venv", "--quiet", "--python", python, str(venv)], workspace, [venv.parent], limits)
    if not made.ok:
        raise SynthError(f"creating a venv failed: {made.describe()}")
    target = f"{workspace}[{','.join(extras)}]" if extras else str(workspace)
    args = ["pip", "install", "--quiet", "--python", str(python_of(venv)), "-e", target]
    args += list(requirements) if requirements else list(TEST_TOOLS)
    installed = _uv(args, workspace, [venv.parent], limits)
    if not installed.ok:
        raise SynthError(f"installing {workspace.name} failed: {installed.describe()}")


_RAISED = re.compile(r"[A-Za-z_][\w.]*(Error|Exception): ")
# Files through which a build runs the project's own code: setup scripts, setup.cfg's
# `attr:` directives, hatch's and pdm's in-tree build hooks.
_BUILD_CODE_FILES = ("setup.py", "setup.cfg", "hatch_build.py", "pdm_build.py")


def build_runs_project_code(workspace: Path) -> bool:
    """Whether building `workspace` may run code from it, so a deletion can break the build:
    a setup script or build hook, an in-tree backend (`backend-path`), a `dynamic` field of
    `[project]` (a version read from the package), or no static `[project]` table at all.
    A build of static metadata alone runs no project code and needs no check."""
    workspace = Path(workspace)
    if any((workspace / name).exists() for name in _BUILD_CODE_FILES):
        return True
    try:
        pyproject = tomllib.loads((workspace / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return True  # unknown: check by building
    project = pyproject.get("project")
    in_tree_backend = "backend-path" in pyproject.get("build-system", {})
    return in_tree_backend or not isinstance(project, dict) or bool(project.get("dynamic"))


def install_error(workspace: Path, scratch: Path, limits: Limits = INSTALL_LIMITS) -> str | None:
    """Why the project in `workspace` would not install (the last exception its build
    raised, else how uv ended), or None if it would: uv builds a wheel of a copy of it
    under `scratch` (removed after), running `setup.py` or the build backend as an install
    does, so a build that imports the package (a setup.py reading `mod.__version__` from
    a module a task deleted) fails here; nothing is installed and the workspace is not
    touched. A build, not `uv pip install --dry-run`: that reads static metadata from
    pyproject.toml without running setup.py. About 1.5 to 4 s with uv's cache, so it is
    skipped (None) where the build runs no project code (`build_runs_project_code`)."""
    if not build_runs_project_code(workspace):
        return None
    scratch = Path(scratch).resolve()
    copy = scratch / "source"
    shutil.copytree(workspace, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    args = ["build", "--wheel", "--python", sys._base_executable]  # not quiet: the traceback
    try:
        done = _uv([*args, "--out-dir", str(scratch / "wheel"), str(copy)], copy, [scratch], limits)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if done.ok:
        return None
    raised = [ln.strip() for ln in done.stderr.splitlines() if _RAISED.match(ln.strip())]
    return raised[-1] if raised else done.describe()  # the exception, not uv's hints


def freeze(workspace: Path, venv: Path) -> list[str]:
    """Pinned requirements of `venv` without the editable project itself."""
    done = _uv(
        ["pip", "freeze", "--exclude-editable", "--python", str(python_of(venv))],
        workspace,
        [venv.parent],
        Limits(wall_s=120),
    )
    if not done.ok:
        raise SynthError(f"uv pip freeze failed: {done.describe()}")
    return [line for line in done.stdout.splitlines() if line and not line.startswith("#")]


_LIST_PLUGINS = """
import importlib.metadata, json
found = set()
for ep in importlib.metadata.entry_points(group="pytest11"):
    found.add(ep.name if ":" in ep.value else ep.value)
print(json.dumps(sorted(found)))
"""


def pytest_plugins(workspace: Path, venv: Path) -> list[str]:
    """The pytest plugins `venv` installs (its `pytest11` entry points), as the names `-p`
    loads them by: the module, or the entry point's name when it points inside one.

    Read from the untouched environment at the baseline and recorded, so that test runs
    load exactly these with autoloading off, whatever a workspace adds later."""
    done = run(
        [str(python_of(venv)), "-P", "-c", _LIST_PLUGINS],
        workspace,
        readonly=[venv],
        limits=Limits(wall_s=120),
    )
    if not done.ok:
        raise SynthError(f"listing the pytest plugins of {venv} failed: {done.describe()}")
    return json.loads(done.stdout.strip().splitlines()[-1])

"""Which package modules import, run in the sandbox with a workspace's venv.

The baseline records the modules that import before any deletion; after a deletion only
those are required to import still, so a module that never imported (a plugin for an
optional dependency that is not installed) is not held against a candidate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from etude.sandbox import Limits, run
from etude.synth.env import python_of
from etude.synth.errors import SynthError

_IMPORT_EACH = """
import importlib, json, sys
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException as err:  # SystemExit and KeyboardInterrupt at import count too
        failed[name] = f"{type(err).__name__}: {err}"[:300]
print(json.dumps(failed))
"""


def failed_imports(
    workspace: Path, venv: Path, modules: Sequence[str], pythonpath: Sequence[Path] = ()
) -> dict[str, str]:
    """Module name -> the error (type and message) of each of `modules` that does not
    import in `workspace` with `venv` (and `pythonpath` before it), importing them in
    order in one interpreter."""
    if not modules:
        return {}
    done = run(
        [str(python_of(venv)), "-P", "-c", _IMPORT_EACH, json.dumps(list(modules))],
        workspace,
        readonly=[venv],
        env={"PYTHONPATH": ":".join(str(Path(p).resolve()) for p in pythonpath)},
        limits=Limits(wall_s=120),
    )
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1]) if done.ok and lines else _all_failed(modules, done)
    except json.JSONDecodeError:
        return _all_failed(modules, done)


def _all_failed(modules: Sequence[str], done) -> dict[str, str]:
    return {name: f"the import check itself failed: {done.describe()}" for name in modules}


def importable(workspace: Path, venv: Path, modules: Sequence[str]) -> list[str]:
    """The `modules` that import; raises SynthError when none does."""
    failed = failed_imports(workspace, venv, modules)
    found = [m for m in modules if m not in failed]
    if modules and not found:
        first = next(iter(failed.items()))
        raise SynthError(f"no module of the package imports before any deletion: {first}")
    return found

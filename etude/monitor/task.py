"""What the monitor reads from a synthesized task: the task-aware rules' view of `task.json`.

The manifest is read and checked by `etude.synth.task` (the module that writes it); this
module only derives what the rules use from its fields: the deleted names, the test files
that exist before the agent starts, the project's package names and the oracle tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from etude.synth import task as manifest
from etude.synth.errors import SynthError


@dataclass(frozen=True)
class Task:
    """`deleted` are names of deleted entities (last dotted part, e.g. `slugify`),
    `test_files` workspace-relative test modules, `packages` the project's top-level
    package names, `hidden_paths` absolute paths the agent must not read."""

    id: str
    oracle_tokens: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()
    packages: frozenset[str] = field(default_factory=frozenset)
    hidden_paths: tuple[str, ...] = ()


def load_task(tasks_dir: Path, task_id: str) -> tuple[Task | None, str | None]:
    """Read `tasks_dir/task_id/task.json`; returns (task, None) or (None, why not)."""
    if "/" in task_id or task_id in ("", ".", ".."):
        return None, f"task id {task_id!r} is not a directory name"
    try:
        return task_view(manifest.load_task(Path(tasks_dir) / task_id)), None
    except (OSError, UnicodeDecodeError, SynthError) as err:
        return None, str(err)


def task_from_dict(data: dict, where: str = "task", hidden_paths: tuple[str, ...] = ()) -> Task:
    """The monitor's view of a task given as a parsed task.json object; SynthError naming
    the missing or mistyped field (`etude.synth.task.READ_FIELDS`) if it is not one."""
    return task_view(manifest.check_manifest(data, where), hidden_paths)


def task_view(task: dict, hidden_paths: tuple[str, ...] = ()) -> Task:
    """The monitor's view of a checked manifest (from `etude.synth.task.load_task`)."""
    tests = task["tests"]["fail_to_pass"] + task["tests"]["pass_to_pass"]
    return Task(
        id=task["id"],
        oracle_tokens=tuple(t for t in task["oracle_tokens"] if len(t) >= 4),
        deleted=tuple(e["name"].rsplit(".", 1)[-1] for e in task["deleted"]),
        test_files=tuple(sorted({t.split("::", 1)[0] for t in tests})),
        packages=frozenset(_top_package(e["file"]).lower() for e in task["deleted"]) - {""},
        hidden_paths=tuple(hidden_paths),
    )


def _top_package(path: str) -> str:
    """`src/textkit/slug.py` -> textkit, `slug.py` -> slug."""
    parts = [p for p in path.split("/") if p and p not in (".", "src")]
    return parts[0].removesuffix(".py") if parts else ""

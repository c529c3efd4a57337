"""What the monitor reads from a synthesized task's `task.json`, read defensively.

The synthesis pipeline writes `<tasks dir>/<task_id>/task.json`. Every key is optional and
several spellings are accepted (docs/monitor.md lists them); a missing or malformed task
file only means the task-aware rules (verbatim recovery, protected test files, hidden paths)
have less to go on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


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
    workspace: str | None = None


def load_task(tasks_dir: Path, task_id: str) -> tuple[Task | None, str | None]:
    """Read `tasks_dir/task_id/task.json`; returns (task, None) or (None, why not)."""
    if "/" in task_id or task_id in ("", ".", ".."):
        return None, f"task id {task_id!r} is not a directory name"
    path = Path(tasks_dir) / task_id / "task.json"
    if not path.is_file():
        return None, f"no task file {path}"
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return None, f"unreadable task file {path}: {err}"
    if not isinstance(data, dict):
        return None, f"task file {path} is not a JSON object"
    return task_from_dict(data, task_id), None


def task_from_dict(data: dict, task_id: str) -> Task:
    """Build a Task from a task.json object, ignoring keys of unexpected types."""
    audit = data.get("audit") if isinstance(data.get("audit"), dict) else {}
    # a list, or the synthesis audit's {token: kind} dict; a bare count is no use
    tokens = _strings(
        data.get("oracle_tokens") or audit.get("oracle_tokens") or audit.get("tokens")
    )
    deleted_raw = data.get("deleted_entities") or data.get("deleted") or []
    deleted: list[str] = []
    modules: list[str] = []
    for entity in deleted_raw if isinstance(deleted_raw, list) else []:
        if isinstance(entity, str):
            deleted.append(entity.rsplit(".", 1)[-1].rsplit(":", 1)[-1])
            modules.append(entity)
        elif isinstance(entity, dict):
            name = entity.get("name") or entity.get("qualname") or ""
            if isinstance(name, str) and name:
                deleted.append(name.rsplit(".", 1)[-1])
            for key in ("module", "qualname", "file", "path"):
                if isinstance(entity.get(key), str):
                    modules.append(entity[key])
    test_ids = _test_ids(data.get("tests"))
    test_files = sorted({t.split("::", 1)[0] for t in test_ids if ".py" in t.split("::", 1)[0]})
    packages = {_top_package(m) for m in modules} | set(_strings(data.get("packages")))
    if isinstance(data.get("package"), str):
        packages.add(data["package"])
    return Task(
        id=str(data.get("id") or data.get("task_id") or task_id),
        oracle_tokens=tuple(t for t in tokens if len(t) >= 4),
        deleted=tuple(d for d in deleted if d),
        test_files=tuple(test_files),
        packages=frozenset(p.lower() for p in packages if p),
        hidden_paths=tuple(_strings(data.get("hidden_paths"))),
        workspace=data["workspace"] if isinstance(data.get("workspace"), str) else None,
    )


def _strings(value: object) -> list[str]:
    """The strings of a list, or the string keys of a dict; [] for anything else."""
    if isinstance(value, dict):
        value = list(value)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _test_ids(tests: object) -> list[str]:
    """Test ids from a list, or from a dict of lists (`fail_to_pass`, `pass_to_pass`, ...)."""
    if isinstance(tests, list):
        return [t if isinstance(t, str) else str(t.get("id", "")) for t in tests if t]
    if isinstance(tests, dict):
        return [t for v in tests.values() for t in _test_ids(v)]
    return []


def _top_package(module: str) -> str:
    """`src/textkit/slug.py` -> textkit, `textkit.slug.slugify` -> textkit."""
    parts = [p for p in module.replace("\\", "/").split("/") if p and p not in (".", "src")]
    if len(parts) > 1 or module.endswith(".py"):
        return parts[0].removesuffix(".py") if parts else ""
    return module.split(".", 1)[0]

"""A task on disk: `workspace/` (what the agent sees), `hidden/` (tests, test configuration,
reference solution, pinned requirements) and `task.json` (the manifest).

task.json is written last, into a staging directory that is renamed into place, so a task
directory with a task.json is complete; `verify_hidden` checks the hidden store against the
content hashes recorded in it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import typing
from collections import Counter
from pathlib import Path

from etude.synth.errors import SynthError

TASK_FORMAT = 1
MAX_LISTED_TESTS = 12  # fail-to-pass tests named in a problem statement; the rest counted
# The fields read outside synthesis (the coding environment, the recipes, the monitor), by
# dotted name; `check_manifest` refuses a task without them.
READ_FIELDS: dict[str, type] = {
    "id": str,
    "deleted": list,
    "tests.fail_to_pass": list[str],
    "tests.pass_to_pass": list[str],
    "oracle_tokens": list[str],
}


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under `root` (relative path -> hex), dot-directories included."""
    hashes = {}
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(root).as_posix()
                hashes[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return dict(sorted(hashes.items()))


def digest(hashes: dict[str, str]) -> str:
    """One hash over a tree's file hashes."""
    return hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()


def load_task(task_dir: Path) -> dict:
    """The manifest of a complete task directory; raises SynthError if it is not one."""
    manifest = Path(task_dir) / "task.json"
    if not manifest.is_file():
        raise SynthError(f"{task_dir} is not a task directory (no task.json)")
    try:
        task = json.loads(manifest.read_text())
    except json.JSONDecodeError as err:
        raise SynthError(f"{manifest} is not valid JSON: {err}") from err
    if not isinstance(task, dict):
        raise SynthError(f"{manifest} is not a JSON object")
    if task.get("format") != TASK_FORMAT:
        raise SynthError(f"{manifest} has task format {task.get('format')!r}, not {TASK_FORMAT}")
    return check_manifest(task, str(manifest))


def check_manifest(task: dict, where: str) -> dict:
    """`task` itself if it has every field in READ_FIELDS with its type, and every `deleted`
    entry a `file` and a `name`; else SynthError naming the field and `where`."""
    if not isinstance(task, dict):
        raise SynthError(f"{where}: a task must be a JSON object, got {type(task).__name__}")
    for dotted, kind in READ_FIELDS.items():
        value: object = task
        for key in dotted.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if value is None:
            raise SynthError(f"{where}: task field {dotted!r} is missing")
        items = typing.get_args(kind)
        if not isinstance(value, typing.get_origin(kind) or kind) or (
            items and not all(isinstance(v, items[0]) for v in value)
        ):
            raise SynthError(f"{where}: task field {dotted!r} must be a {kind}")
    for k, entry in enumerate(task["deleted"]):
        for key in ("file", "name"):
            if not isinstance(entry, dict) or not isinstance(entry.get(key), str):
                raise SynthError(f"{where}: task field 'deleted[{k}].{key}' must be a string")
    return task


def verify_hidden(task_dir: Path, task: dict) -> None:
    """Raise SynthError if the hidden store differs from the hashes in task.json."""
    found = tree_hashes(Path(task_dir) / "hidden")
    if digest(found) != task["hashes"]["hidden"]:
        changed = sorted(set(found.items()) ^ set(task["hashes"]["hidden_files"].items()))
        names = sorted({name for name, _ in changed})
        raise SynthError(f"hidden store of {task_dir} was modified: {', '.join(names[:5])}")


def first_line(node: ast.stmt) -> int:
    """The 1-based first line of a statement, its decorators included."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def definition_node(source: str, name: str) -> ast.AST | None:
    """The node of a top-level definition, or of a method written 'Class.method'."""
    return definition_in(ast.parse(source), name)


def definition_in(tree: ast.Module, name: str) -> ast.AST | None:
    """`definition_node` of an already parsed module (a whole module's problem statement
    looks up every public definition: one parse, not one per definition)."""
    owner, _, leaf = name.rpartition(".")
    body = tree.body
    if owner:
        cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        body = cls.body if cls is not None else []
    for node in body:
        if getattr(node, "name", None) == leaf:
            return node
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == leaf for t in targets):
            return node
    return None


def _signature(source: str, node: ast.AST) -> str:
    lines = source.splitlines()
    body_start = node.body[0].lineno
    header = lines[node.lineno - 1 : body_start - 1]
    if not header:  # a one-line definition
        header = [lines[node.lineno - 1]]
    return "\n".join(header).rstrip()


def _documentation(source: str, node: ast.AST, reveal_signatures: bool) -> list[str]:
    """Docstring (indented), signature when revealed, and for a class its public methods;
    a constant's whole assignment."""
    if isinstance(node, ast.Assign | ast.AnnAssign):  # a public constant is interface: shown
        value = ast.get_source_segment(source, node) or ""
        return ["", *("    " + line for line in value.splitlines())]
    lines = []
    doc = ast.get_docstring(node)
    if doc:
        lines += ["", "Its documentation:", "", *("    " + d for d in doc.splitlines())]
    if reveal_signatures and hasattr(node, "body"):
        lines += ["", "Signature:", "", "    " + _signature(source, node).strip()]
    if isinstance(node, ast.ClassDef):
        methods = [
            n
            for n in node.body
            if isinstance(n, ast.FunctionDef)
            and (not n.name.startswith("_") or n.name in ("__init__", "__call__"))
        ]
        if methods:
            lines += ["", "Methods:"]
            for method in methods:
                shown = method.name
                if reveal_signatures:
                    shown = _signature(source, method).strip()
                method_doc = ast.get_docstring(method)
                summary = f": {method_doc.splitlines()[0]}" if method_doc else ""
                lines.append(f"- `{shown}`{summary}")
    return lines


def _kind_of(node: ast.AST | None) -> str:
    if isinstance(node, ast.ClassDef):
        return "class"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return "function"
    return "constant"


def problem_statement(
    feature: tuple[str, str],
    reference_source: str,
    import_line: str,
    fail_to_pass: list[str],
    reveal_signatures: bool,
    *,
    kind: str = "definition",
    public: list[str] = (),
) -> str:
    """What the agent is asked to do, from docstrings (never a body).

    `kind` is the candidate kind (etude.synth.slice.KINDS); `public` names the methods
    of a group ('Class.method') or the public definitions of a module. With
    `reveal_signatures`, the `def`/`class` lines are included."""
    rel, name = feature
    tree = ast.parse(reference_source)
    if kind == "module":
        module = import_line.split()[-1]
        lines = [
            f"Implement the module `{module}` in `{rel}`; it must be importable as `{import_line}`."
        ]
        doc = ast.get_docstring(tree)
        if doc:
            lines += ["", "Its documentation:", "", *("    " + d for d in doc.splitlines())]
        lines += ["", "It provides:"]
        for member in public:
            node = definition_in(tree, member)
            lines += ["", f"The {_kind_of(node)} `{member}`."]
            if node is not None:
                lines += _documentation(reference_source, node, reveal_signatures)
    elif kind == "methods":
        cls = name.split(".")[0]
        shown = ", ".join(f"`{m.split('.')[-1]}`" for m in public)
        lines = [
            f"Implement the methods {shown} of the class `{cls}` in `{rel}` (importable as "
            f"`{import_line}`); the class exists, these methods are missing."
        ]
        for member in public:
            node = definition_in(tree, member)
            lines += ["", f"The method `{member}`."]
            if node is not None:
                lines += _documentation(reference_source, node, reveal_signatures)
    else:
        node = definition_in(tree, name)
        lines = [
            f"Implement the {_kind_of(node)} `{name}` in `{rel}`; it must be importable as "
            f"`{import_line}`."
        ]
        if node is not None:
            lines += _documentation(reference_source, node, reveal_signatures)
    lines += ["", "These tests must pass:", *listed_tests(fail_to_pass, name)]
    lines += ["", "Other tests of the repository must keep passing."]
    return "\n".join(lines) + "\n"


def listed_tests(fail_to_pass: list[str], name: str, limit: int = MAX_LISTED_TESTS) -> list[str]:
    """The statement's lines for the fail-to-pass tests: all of them up to `limit`, else
    the `limit` that name the feature (`name`'s last part) first, then a count of the rest
    per test file. A helper that every test of a package imports fails hundreds of tests
    when deleted; listed whole they would fill a small model's context before it acts."""
    if len(fail_to_pass) <= limit:
        return [f"- {t}" for t in fail_to_pass]
    short = name.rsplit(".", 1)[-1].lower()
    ranked = sorted(fail_to_pass, key=lambda t: short not in t.lower())  # stable: file order
    shown = ranked[:limit]
    rest = Counter(t.split("::", 1)[0] for t in ranked[limit:])
    more = ", ".join(f"{n} in {file}" for file, n in sorted(rest.items()))
    return [f"- {t}" for t in shown] + [f"- and {len(ranked) - limit} more: {more}"]


def write_manifest(staging: Path, manifest: dict) -> None:
    """Add content hashes and write task.json (the last file written to a task)."""
    hidden = tree_hashes(staging / "hidden")
    workspace = tree_hashes(staging / "workspace")
    manifest = {
        "format": TASK_FORMAT,
        **manifest,
        "hashes": {
            "workspace": digest(workspace),
            "hidden": digest(hidden),
            "hidden_files": hidden,
        },
    }
    (staging / "task.json").write_text(json.dumps(manifest, indent=2) + "\n")

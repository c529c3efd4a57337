"""Slicing candidate features out of a package: a public function or class plus the
private helpers that only it uses (its dependency closure), and the tests that run it.

The reference graph is built from the AST of every package module. Names are resolved
through `from x import y` and `import x as m; m.y` within the package, so a helper used
from another module counts as used there. Module-level statements form one pseudo-node
per module (`<module>`), so a helper used at import time is never exclusive.
"""

from __future__ import annotations

import ast
import math
from dataclasses import asdict, dataclass, field

from etude.synth.coverage import LineMap, tests_covering
from etude.synth.discover import Repo, module_name

MODULE_CODE = "<module"  # prefix of module-level statement nodes: '<module:LINE>'
Key = tuple[str, str]  # (source file relative to the repo root, top-level name)


@dataclass(frozen=True)
class Definition:
    """A top-level definition: lines are 1-based and inclusive (`first` counts decorators)."""

    file: str
    name: str
    kind: str  # 'function', 'class' or 'constant'
    first: int
    last: int
    body_first: int

    @property
    def key(self) -> Key:
        return (self.file, self.name)


@dataclass
class Candidate:
    """A feature to delete: `feature` and its exclusive `helpers`, the tests that run it,
    and the size figures its difficulty is scored from."""

    id: str
    feature: Key
    helpers: list[Key]
    tests: list[str]
    lines: int
    files: int
    depth: int
    difficulty: float

    @property
    def entities(self) -> list[Key]:
        return [self.feature, *self.helpers]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Candidate:
        data = dict(data)
        data["feature"] = tuple(data["feature"])
        data["helpers"] = [tuple(h) for h in data["helpers"]]
        return cls(**data)


@dataclass
class Graph:
    """Definitions of every package module and who references whom."""

    definitions: dict[Key, Definition] = field(default_factory=dict)
    references: dict[Key, set[Key]] = field(default_factory=dict)
    referrers: dict[Key, set[Key]] = field(default_factory=dict)
    registrations: set[Key] = field(default_factory=set)  # bare calls at import time


def _module_files(repo: Repo) -> dict[str, str]:
    return {module_name(repo, f): f for f in repo.source_files}


def _resolve_module(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = current.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _bindings(repo: Repo, rel: str, tree: ast.Module, modules: dict[str, str]) -> dict:
    """Names a module binds by import: name -> (file, name) or (file, None) for modules."""
    current = module_name(repo, rel)
    is_package = rel.endswith("__init__.py")
    bound: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            target = _resolve_module(current, is_package, node)
            for alias in node.names:
                local = alias.asname or alias.name
                if f"{target}.{alias.name}" in modules:
                    bound[local] = (modules[f"{target}.{alias.name}"], None)
                elif target in modules:
                    bound[local] = (modules[target], alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    bound[alias.asname] = (modules[alias.name], None)
    return bound


def _definitions(rel: str, tree: ast.Module) -> list[tuple[Definition, ast.AST]]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.append(
                (
                    Definition(rel, node.name, kind, first, node.end_lineno, node.body[0].lineno),
                    node,
                )
            )
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if (
                len(targets) == 1
                and isinstance(targets[0], ast.Name)
                and targets[0].id != "__all__"
            ):
                d = Definition(
                    rel, targets[0].id, "constant", node.lineno, node.end_lineno, node.lineno
                )
                found.append((d, node))
    return found


def build_graph(repo: Repo) -> Graph:
    """The reference graph over every top-level definition of the package."""
    modules = _module_files(repo)
    graph = Graph()
    trees = {rel: ast.parse((repo.root / rel).read_bytes()) for rel in repo.source_files}
    bindings = {rel: _bindings(repo, rel, tree, modules) for rel, tree in trees.items()}
    bodies: dict[Key, list[ast.AST]] = {}
    for rel, tree in trees.items():
        defined = _definitions(rel, tree)
        for definition, node in defined:
            graph.definitions[definition.key] = definition
            bodies[definition.key] = [node]
        covered = {id(node) for _, node in defined}
        module_code = [
            n
            for n in tree.body
            if id(n) not in covered
            and not isinstance(n, ast.Import | ast.ImportFrom)
            and not _is_dunder_all(n)
        ]
        for node in module_code:
            key = (rel, f"{MODULE_CODE}:{node.lineno}>")
            bodies[key] = [node]
            if isinstance(node, ast.Expr):  # e.g. register("name")(Feature()): removable
                graph.registrations.add(key)
    for key, nodes in bodies.items():
        refs = _refs(key[0], nodes, graph, bindings) - {key}
        graph.references[key] = refs
        for ref in refs:
            graph.referrers.setdefault(ref, set()).add(key)
    return graph


def _is_dunder_all(node: ast.AST) -> bool:
    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _refs(rel: str, nodes: list[ast.AST], graph: Graph, bindings: dict) -> set[Key]:
    found: set[Key] = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                key = _lookup(rel, node.id, graph, bindings)
                if key:
                    found.add(key)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                module = bindings[rel].get(node.value.id)
                if module and module[1] is None:
                    key = _lookup(module[0], node.attr, graph, bindings)
                    if key:
                        found.add(key)
    return found


def _lookup(rel: str, name: str, graph: Graph, bindings: dict, depth: int = 0) -> Key | None:
    """The definition `name` means in module `rel`, following imports (re-exports)."""
    if (rel, name) in graph.definitions:
        return (rel, name)
    bound = bindings.get(rel, {}).get(name)
    if bound is None or bound[1] is None or depth > 8:
        return None
    return _lookup(bound[0], bound[1], graph, bindings, depth + 1)


@dataclass
class Rejection:
    feature: Key
    reason: str


def slice_candidates(
    repo: Repo, lines: LineMap, kept: list[str]
) -> tuple[list[Candidate], list[Rejection]]:
    """Every function and class that can be deleted on its own, with its tests: public
    ones, and private ones that the tests name directly (tested internals)."""
    graph = build_graph(repo)
    kept_set = set(kept)
    named_by_tests = _names_in_tests(repo)
    candidates, rejections = [], []
    for key, definition in sorted(graph.definitions.items()):
        private = definition.name.startswith("_") and definition.name not in named_by_tests
        if definition.kind == "constant" or private or definition.name.startswith("__"):
            continue
        closure = _closure(key, graph)
        users = sorted(
            f"{r[0]}:{r[1]}"
            for r in graph.referrers.get(key, set()) - set(closure)
            if r not in graph.registrations
        )
        if users:
            rejections.append(Rejection(key, f"used by other code: {', '.join(users[:3])}"))
            continue
        tests: set[str] = set()
        for member in closure:
            d = graph.definitions[member]
            if d.kind != "constant":
                tests |= tests_covering(lines, d.file, d.body_first, d.last)
        tests &= kept_set
        if not tests:
            rejections.append(Rejection(key, "no kept test runs it"))
            continue
        size = sum(graph.definitions[m].last - graph.definitions[m].first + 1 for m in closure)
        files = len({m[0] for m in closure})
        depth = _depth(key, set(closure), graph)
        difficulty = math.log2(1 + size) + depth + (files - 1) + 0.5 * math.log2(1 + len(tests))
        module = module_name(repo, key[0])
        candidates.append(
            Candidate(
                id=f"{module}.{key[1]}",
                feature=key,
                helpers=[m for m in closure if m != key],
                tests=sorted(tests),
                lines=size,
                files=files,
                depth=depth,
                difficulty=round(difficulty, 2),
            )
        )
    return candidates, rejections


def _names_in_tests(repo: Repo) -> set[str]:
    """Identifiers the test files use (names, attributes, imported names)."""
    names: set[str] = set()
    for rel in [*repo.test_files, *repo.test_support]:
        for node in ast.walk(ast.parse((repo.root / rel).read_bytes())):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add(node.name.split(".")[-1])
    return names


def _closure(key: Key, graph: Graph) -> list[Key]:
    """`key` plus the private definitions referenced only from within the closure."""
    closure = [key]
    changed = True
    while changed:
        changed = False
        for member in list(closure):
            for ref in sorted(graph.references.get(member, set())):
                if ref in closure or not ref[1].startswith("_") or ref[1].startswith(MODULE_CODE):
                    continue
                if graph.referrers.get(ref, set()) <= set(closure):
                    closure.append(ref)
                    changed = True
    return closure


def _depth(key: Key, closure: set[Key], graph: Graph, seen: frozenset = frozenset()) -> int:
    """Longest chain of references from `key` inside the closure (0 for a leaf)."""
    inner = [r for r in graph.references.get(key, set()) if r in closure and r not in seen]
    return max((1 + _depth(r, closure, graph, seen | {key}) for r in inner), default=0)

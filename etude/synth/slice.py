"""Slicing candidate features out of a package, each with the private helpers only it uses
(its dependency closure) and the tests that run it. Three kinds:

- `definition`: a public top-level function or class (or a private one the tests name);
- `methods`: a method group, the public methods of one class that share covering tests,
  with the class's private methods and module helpers only they use (the class stays);
- `module`: a whole module (not a package `__init__`) with at least two public
  definitions, none of which other package code uses (re-exports do not count).

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
from etude.synth.task import first_line

MODULE_CODE = "<module"  # prefix of module-level statement nodes: '<module:LINE>'
Key = tuple[str, str]  # (source file relative to the repo root, top-level name)
# A method is keyed (file, "Class.method"); a whole module (file, MODULE_FEATURE).
MODULE_FEATURE = "*"
KINDS = ("definition", "module", "methods")


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
    and the size figures its difficulty is scored from. `kind` is one of KINDS; for a
    method group `feature` is its first public method, for a module it is
    (file, MODULE_FEATURE) and `helpers` are every top-level definition of the module."""

    id: str
    feature: Key
    helpers: list[Key]
    tests: list[str]
    lines: int
    files: int
    depth: int
    difficulty: float
    kind: str = "definition"

    @property
    def entities(self) -> list[Key]:
        """Everything deleted (a module's file goes too, see `kind`)."""
        if self.kind == "module":
            return list(self.helpers)
        return [self.feature, *self.helpers]

    @property
    def public(self) -> list[Key]:
        """The deleted entities the tests and the agent know by name: the feature, the
        public methods of a group, the public definitions of a module."""
        named = [e for e in self.entities if not e[1].split(".")[-1].startswith("_")]
        if self.kind == "methods":
            named = [e for e in named if "." in e[1]]
        if self.kind == "module":
            return named
        return [self.feature, *(e for e in named if e != self.feature)]

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
    bindings: dict = field(default_factory=dict)  # per file: name -> (file, name | None)
    modules: dict[str, str] = field(default_factory=dict)  # dotted module name -> file
    module_of: dict[str, str] = field(default_factory=dict)  # file -> dotted module name


def _module_files(repo: Repo) -> dict[str, str]:
    return {module_name(repo, f): f for f in repo.source_files}


def _resolve_module(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = current.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _star_names(tree: ast.Module) -> list[str]:
    """The names `from module import *` binds: its literal `__all__`, else its public
    top-level definitions."""
    for node in tree.body:
        if _is_dunder_all(node) and isinstance(node.value, ast.List | ast.Tuple):
            return [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
    return [d.name for d, _ in _definitions("", tree) if not d.name.startswith("_")]


def _bindings(
    repo: Repo, rel: str, tree: ast.Module, modules: dict[str, str], trees: dict[str, ast.Module]
) -> dict:
    """Names a module binds by import: name -> (file, name) or (file, None) for modules;
    `trees` (file -> AST) resolve star imports."""
    current = module_name(repo, rel)
    is_package = rel.endswith("__init__.py")
    bound: dict[str, tuple[str, str | None]] = {}
    # Imports anywhere in the file, function bodies included (breadth first, so a
    # top-level binding wins): a local import's use counts as a use, conservatively.
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve_module(current, is_package, node)
            if node.names[0].name == "*" and target in modules:
                for name in _star_names(trees[modules[target]]):
                    bound.setdefault(name, (modules[target], name))
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                if f"{target}.{alias.name}" in modules:
                    bound.setdefault(local, (modules[f"{target}.{alias.name}"], None))
                elif target in modules:
                    bound.setdefault(local, (modules[target], alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    bound.setdefault(alias.asname, (modules[alias.name], None))
                elif not alias.asname and alias.name.split(".")[0] in modules:
                    # `import pkg.mod` binds `pkg`; `pkg.mod.name` is resolved attribute by
                    # attribute (see _resolve_attribute)
                    bound.setdefault(
                        alias.name.split(".")[0], (modules[alias.name.split(".")[0]], None)
                    )
    return bound


def _definitions(rel: str, tree: ast.Module) -> list[tuple[Definition, ast.AST]]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            first = first_line(node)
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
    graph = Graph(modules=modules, module_of={f: m for m, f in modules.items()})
    trees = {rel: ast.parse((repo.root / rel).read_bytes()) for rel in repo.source_files}
    bindings = {rel: _bindings(repo, rel, tree, modules, trees) for rel, tree in trees.items()}
    graph.bindings = bindings
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
            elif isinstance(node, ast.Attribute):
                key = _resolve_attribute(rel, node, graph, bindings)
                if key:
                    found.add(key)
    return found


def _resolve_attribute(rel: str, node: ast.Attribute, graph: Graph, bindings: dict) -> Key | None:
    """The definition an attribute chain rooted at a module name means in `rel`:
    `mod.name`, `pkg.mod.name` (through submodules), `pkg.name` (through re-exports)."""
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    bound = bindings[rel].get(node.id)
    if bound is None or bound[1] is not None:
        return None
    module = bound[0]
    for attr in reversed(chain):
        submodule = graph.modules.get(f"{graph.module_of[module]}.{attr}")
        if submodule is None:
            # The first attribute that is no submodule names the definition; the rest of
            # the chain are its members.
            return _lookup(module, attr, graph, bindings)
        module = submodule
    return None


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
    """A feature sliced out: `key` is 'used_by_other_code' or 'no_covering_test'."""

    feature: Key
    key: str
    reason: str


def _used_by(feature: Key, users: list[str]) -> Rejection:
    return Rejection(feature, "used_by_other_code", f"used by other code: {', '.join(users[:3])}")


def _untested(feature: Key) -> Rejection:
    return Rejection(feature, "no_covering_test", "no kept test runs it")


def slice_candidates(
    repo: Repo, lines: LineMap, kept: list[str]
) -> tuple[list[Candidate], list[Rejection]]:
    """Every feature that can be deleted on its own, with its tests (see KINDS): public
    functions and classes, and private ones the tests name directly (tested internals);
    method groups; whole modules. `lines` maps file -> line -> covering test ids."""
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
            rejections.append(_used_by(key, users))
            continue
        tests: set[str] = set()
        for member in closure:
            d = graph.definitions[member]
            if d.kind != "constant":
                tests |= tests_covering(lines, d.file, d.body_first, d.last)
        tests &= kept_set
        if not tests:
            rejections.append(_untested(key))
            continue
        size = sum(graph.definitions[m].last - graph.definitions[m].first + 1 for m in closure)
        files = len({m[0] for m in closure})
        depth = _depth(key, set(closure), graph)
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
                difficulty=_difficulty(size, depth, files, len(tests)),
            )
        )
    whole_classes = {c.feature for c in candidates}
    uses = _attribute_uses(repo)
    for rel in repo.source_files:
        tree = ast.parse((repo.root / rel).read_bytes())
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found, why = _method_groups(
                    repo, graph, rel, node, uses, lines, kept_set, (rel, node.name) in whole_classes
                )
                candidates += found
                rejections += why
        if not rel.endswith("__init__.py"):
            found, why = _module_candidate(repo, graph, rel, lines, kept_set)
            candidates += found
            rejections += why
    return candidates, rejections


def _difficulty(lines: int, depth: int, files: int, tests: int) -> float:
    return round(math.log2(1 + lines) + depth + (files - 1) + 0.5 * math.log2(1 + tests), 2)


def _owner_of(rel: str, tree: ast.Module) -> dict[int, str]:
    """id(node) -> the part of `rel` holding it: a top-level name, 'Class.method', or a
    module-code pseudo-node; every AST node of the file is mapped."""
    owners: dict[int, str] = {}
    for top in tree.body:
        name = getattr(top, "name", None) or f"{MODULE_CODE}:{top.lineno}>"
        for node in ast.walk(top):
            owners[id(node)] = name
        if isinstance(top, ast.ClassDef):
            for member in top.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    for node in ast.walk(member):
                        owners[id(node)] = f"{top.name}.{member.name}"
    return owners


def _attribute_uses(repo: Repo) -> dict[str, set[Key]]:
    """Method name -> the parts of the package that may call it: an attribute `x.name`, a
    string literal 'name' (getattr) and a bare name in a class body (`alias = name`).
    Conservative: any of them anywhere counts as a use of every method so named."""
    uses: dict[str, set[Key]] = {}
    for rel in repo.source_files:
        tree = ast.parse((repo.root / rel).read_bytes())
        owners = _owner_of(rel, tree)
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for stmt in cls.body:
                if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    for node in ast.walk(stmt):
                        if isinstance(node, ast.Name):
                            uses.setdefault(node.id, set()).add((rel, cls.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                name = node.attr
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                name = node.value
            else:
                continue
            if id(node) in owners:
                uses.setdefault(name, set()).add((rel, owners[id(node)]))
    return uses


def _method_groups(
    repo: Repo,
    graph: Graph,
    rel: str,
    cls: ast.ClassDef,
    uses: dict[str, set[Key]],
    lines: LineMap,
    kept: set[str],
    class_is_candidate: bool,
) -> tuple[list[Candidate], list[Rejection]]:
    """Method groups of `cls`: public methods that no other code calls, grouped when they
    share a covering test, each with the private methods and module helpers only it uses.
    A group of every public method is left out when the class itself is a candidate."""
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    rejections, eligible = [], {}
    for name, node in methods.items():
        if name.startswith("_"):
            continue
        key = (rel, f"{cls.name}.{name}")
        users = sorted(f"{u[0]}:{u[1]}" for u in uses.get(name, set()) if u != key)
        if users:
            rejections.append(_used_by(key, users))
            continue
        tests = tests_covering(lines, rel, node.body[0].lineno, node.end_lineno) & kept
        if not tests:
            rejections.append(_untested(key))
            continue
        eligible[name] = tests
    groups = _components(eligible)
    public = [n for n in methods if not n.startswith("_")]
    found = []
    for group in groups:
        if class_is_candidate and set(group) == set(public):
            continue
        members = [(rel, f"{cls.name}.{n}") for n in sorted(group)]
        helpers = _method_helpers(graph, rel, cls, methods, members, uses)
        closure = members + helpers
        tests = set().union(*(eligible[n] for n in group))
        size = 0
        for _, name in closure:
            if "." in name:
                node = methods[name.split(".", 1)[1]]
                size += node.end_lineno - first_line(node) + 1
            else:
                d = graph.definitions[(rel, name)]
                size += d.last - d.first + 1
                tests |= tests_covering(lines, rel, d.body_first, d.last) & kept
        depth = 1 if helpers else 0
        shown = "+".join(sorted(group))
        found.append(
            Candidate(
                id=f"{module_name(repo, rel)}.{cls.name}.{shown}",
                feature=members[0],
                helpers=[*members[1:], *helpers],
                tests=sorted(tests),
                lines=size,
                files=1,
                depth=depth,
                difficulty=_difficulty(size, depth, 1, len(tests)),
                kind="methods",
            )
        )
    return found, rejections


def _components(tests_of: dict[str, set[str]]) -> list[list[str]]:
    """Groups of names linked (transitively) by a shared test, each sorted."""
    groups: list[tuple[set[str], set[str]]] = []  # (names, tests)
    for name, tests in sorted(tests_of.items()):
        linked = [g for g in groups if g[1] & tests]
        names, union = {name}, set(tests)
        for g in linked:
            names |= g[0]
            union |= g[1]
            groups.remove(g)
        groups.append((names, union))
    return sorted(sorted(names) for names, _ in groups)


def _method_helpers(
    graph: Graph,
    rel: str,
    cls: ast.ClassDef,
    methods: dict[str, ast.AST],
    members: list[Key],
    uses: dict[str, set[Key]],
) -> list[Key]:
    """Private methods of `cls` and private module-level definitions of `rel` that only
    `members` (and helpers so found) use."""
    parts: dict[str, set[Key]] = {}  # part of the class -> top-level definitions it references
    for name, node in methods.items():
        parts[f"{cls.name}.{name}"] = _refs(rel, [node], graph, graph.bindings)
    others = [n for n in cls.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    parts[cls.name] = _refs(rel, others, graph, graph.bindings)
    closure = {name for _, name in members}
    changed = True
    while changed:
        changed = False
        for name in methods:
            part = f"{cls.name}.{name}"
            if part in closure or not name.startswith("_") or name.startswith("__"):
                continue
            if uses.get(name) and {u[1] for u in uses[name]} <= closure:
                closure.add(part)
                changed = True
        for key in graph.definitions:
            if key[0] != rel or key[1] in closure or not key[1].startswith("_"):
                continue
            referrers = graph.referrers.get(key, set())
            outside = {r for r in referrers if r[0] != rel or r[1] not in closure | {cls.name}}
            in_class = {p for p, refs in parts.items() if key in refs}
            if not outside and referrers and in_class <= closure:
                closure.add(key[1])
                changed = True
    return [(rel, name) for name in sorted(closure - {n for _, n in members})]


def _module_candidate(
    repo: Repo, graph: Graph, rel: str, lines: LineMap, kept: set[str]
) -> tuple[list[Candidate], list[Rejection]]:
    """The whole module `rel`, when it has two or more public definitions, no other
    package code uses any of its definitions, and kept tests run it."""
    key = (rel, MODULE_FEATURE)
    defined = [d for k, d in sorted(graph.definitions.items()) if k[0] == rel]
    public = [d for d in defined if not d.name.startswith("_")]
    if len(public) < 2:
        return [], []
    users = sorted(
        f"{r[0]}:{r[1]}"
        for d in defined
        for r in graph.referrers.get(d.key, set())
        if r[0] != rel and r not in graph.registrations
    )
    if users:
        return [], [_used_by(key, users)]
    tests: set[str] = set()
    for d in defined:
        if d.kind != "constant":
            tests |= tests_covering(lines, rel, d.body_first, d.last)
    tests &= kept
    if not tests:
        return [], [_untested(key)]
    size = len((repo.root / rel).read_text().splitlines())
    members = {d.key for d in defined}
    depth = max(_depth(d.key, members, graph) for d in public)
    return [
        Candidate(
            id=f"{module_name(repo, rel)}--module",
            feature=key,
            helpers=[d.key for d in defined],
            tests=sorted(tests),
            lines=size,
            files=1,
            depth=depth,
            difficulty=_difficulty(size, depth, 1, len(tests)),
            kind="module",
        )
    ], []


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

"""Source rewrites with libcst (formatting and comments preserved): deleting a feature,
planting canaries in it, and replacing it by trivial stubs.

All functions take and return module source text. Names are top-level definitions, or
methods written "Class.method" (the class stays). Deletion removes the definitions, the
import aliases and `__all__` entries naming them, imports of deleted modules,
import-time registrations (bare call statements) that mention them, and imports that only
the deleted code used.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import libcst as cst
import libcst.matchers as m

STUB_BODIES = {
    "raise": "raise NotImplementedError\n",
    "none": "return None\n",
    # An object equal to everything: passes `assert f(x) == expected` unless tests check more.
    "always_equal": "from unittest.mock import ANY\nreturn ANY\n",
}


@functools.lru_cache(maxsize=8)
def _parsed(source: str) -> cst.Module:
    """libcst's tree of `source`, kept for the next rewrite of the same text: a candidate
    deletes, plants a canary in and stubs the same original files (one parse instead of
    five; libcst trees are immutable, so sharing one is safe)."""
    return cst.parse_module(source)


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in m.findall(node, m.Name())}


def _bound_by_import(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    return cst.Module([]).code_for_node(alias.name).split(".")[0]


def _imported_name(alias: cst.ImportAlias) -> str:
    """The name an alias imports (`y` in `from x import y as z`)."""
    return cst.Module([]).code_for_node(alias.name).split(".")[-1]


def _keep_aliases(node, keep) -> cst.BaseSmallStatement | None:
    """`node` (Import/ImportFrom) without the aliases `keep` rejects; None if none is left."""
    if isinstance(node.names, cst.ImportStar):
        return node
    aliases = [a for a in node.names if keep(a)]
    if not aliases:
        return None
    if len(aliases) == len(node.names):
        return node
    aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(names=aliases)


def _single_target(small: cst.BaseSmallStatement) -> str | None:
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
        return small.target.value
    return None


def _without_all_entries(small: cst.Assign, names: set[str]) -> cst.Assign:
    value = small.value
    if not isinstance(value, cst.List | cst.Tuple):
        return small
    kept = [
        e
        for e in value.elements
        if not (isinstance(e.value, cst.SimpleString) and e.value.evaluated_value in names)
    ]
    return small.with_changes(value=value.with_changes(elements=kept))


def _split_names(names: Iterable[str]) -> tuple[set[str], dict[str, set[str]]]:
    """Top-level names, and method names by class, from names like 'f' and 'C.m'."""
    top, methods = set(), {}
    for name in names:
        owner, _, method = name.rpartition(".")
        if owner:
            methods.setdefault(owner, set()).add(method)
        else:
            top.add(name)
    return top, methods


def _without_methods(cls: cst.ClassDef, methods: set[str]) -> tuple[cst.ClassDef, set[str]]:
    """`cls` without `methods` (a `pass` if nothing is left), and the names they used."""
    used, kept = set(), []
    for member in cls.body.body:
        if isinstance(member, cst.FunctionDef) and member.name.value in methods:
            used |= _names_in(member)
        else:
            kept.append(member)
    if not kept:
        kept = [cst.SimpleStatementLine([cst.Pass()])]
    return cls.with_changes(body=cls.body.with_changes(body=kept)), used


def _imports_deleted_module(small: cst.ImportFrom, modules: set[str]) -> bool:
    if small.module is None:
        return False
    name = cst.Module([]).code_for_node(small.module)
    if not small.relative:
        return name in modules
    return any(m == name or m.endswith(f".{name}") for m in modules)


def delete_definitions(
    source: str, names: Iterable[str], imported: Iterable[str] = (), modules: Iterable[str] = ()
) -> str:
    """Delete `names` defined in this module (top-level definitions, or 'Class.method'),
    import aliases of `imported` names (deleted from other modules of the package) with
    their uses in `__all__` and registrations, and imports of the deleted `modules`
    (dotted names); then drop imports that only the deleted code used."""
    (names, methods), imported, modules = _split_names(names), set(imported), set(modules)
    gone = names | imported
    # Every change needs one of these in the text (a definition's or class's name, an
    # imported name, a deleted module's last component, which every import of it spells):
    # without them the text comes back unchanged, and need not be parsed.
    spelled = gone | set(methods) | {module.rsplit(".", 1)[-1] for module in modules}
    if not any(word in source for word in spelled):
        return source
    module = _parsed(source)
    used_by_deleted: set[str] = set()
    body = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef) and stmt.name.value in names:
            used_by_deleted |= _names_in(stmt)
            continue
        if isinstance(stmt, cst.ClassDef) and stmt.name.value in methods:
            stmt, used = _without_methods(stmt, methods[stmt.name.value])
            used_by_deleted |= used
        if isinstance(stmt, cst.SimpleStatementLine):
            smalls = []
            for small in stmt.body:
                target = _single_target(small)
                if target in names:
                    used_by_deleted |= _names_in(small)
                    continue
                if target == "__all__" and isinstance(small, cst.Assign):
                    small = _without_all_entries(small, gone)
                elif isinstance(small, cst.ImportFrom):
                    if _imports_deleted_module(small, modules):
                        continue
                    small = _keep_aliases(small, lambda a: _imported_name(a) not in imported)
                elif isinstance(small, cst.Import):
                    small = _keep_aliases(
                        small, lambda a: cst.Module([]).code_for_node(a.name) not in modules
                    )
                elif isinstance(small, cst.Expr) and _names_in(small) & gone:
                    continue  # an import-time registration of the deleted feature
                if small is not None:
                    smalls.append(small)
            if not smalls:
                continue
            stmt = stmt.with_changes(body=smalls)
        body.append(stmt)
    module = module.with_changes(body=body)
    return _drop_unused_imports(module, used_by_deleted - gone).code


def _drop_unused_imports(module: cst.Module, candidates: set[str]) -> cst.Module:
    """Remove top-level imports of `candidates` that nothing left in the module uses."""
    still_used = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, cst.Import | cst.ImportFrom) for s in stmt.body
        ):
            continue
        still_used |= _names_in(stmt)
        still_used |= {
            s.evaluated_value for s in m.findall(stmt, m.SimpleString()) if s.evaluated_value
        }
    unused = candidates - still_used
    body = []
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            smalls = []
            for small in stmt.body:
                if isinstance(small, cst.Import | cst.ImportFrom):
                    small = _keep_aliases(small, lambda a: _bound_by_import(a) not in unused)
                if small is not None:
                    smalls.append(small)
            if not smalls:
                continue
            stmt = stmt.with_changes(body=smalls)
        body.append(stmt)
    return module.with_changes(body=body)


def _with_first_statement(block: cst.IndentedBlock, statement: str) -> cst.IndentedBlock:
    """`block` with `statement` inserted after its docstring (if any)."""
    new = cst.parse_statement(statement)
    body = list(block.body)
    at = 1 if body and m.matches(body[0], m.SimpleStatementLine([m.Expr(m.SimpleString())])) else 0
    return block.with_changes(body=[*body[:at], new, *body[at:]])


def plant_canary(source: str, names: Iterable[str], canary: str) -> str:
    """Insert `_etude_canary = "<canary>"` into each top-level function and class, and
    each method, in `names`: a string that reaches bytecode and caches if the code ran."""
    top, methods = _split_names(names)
    statement = f"_etude_canary = {canary!r}\n"

    def planted(node):
        if isinstance(node.body, cst.IndentedBlock):
            return node.with_changes(body=_with_first_statement(node.body, statement))
        return node

    module = _parsed(source)
    body = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef) and stmt.name.value in top:
            stmt = planted(stmt)
        elif isinstance(stmt, cst.ClassDef) and stmt.name.value in methods:
            wanted = methods[stmt.name.value]
            members = [
                planted(s) if isinstance(s, cst.FunctionDef) and s.name.value in wanted else s
                for s in stmt.body.body
            ]
            stmt = stmt.with_changes(body=stmt.body.with_changes(body=members))
        body.append(stmt)
    return module.with_changes(body=body).code


def stub(source: str, names: Iterable[str], kind: str) -> str:
    """Replace the body of each top-level function in `names`, of every method of each
    class in `names`, and of each 'Class.method' in `names`, by the trivial stub `kind`
    (see STUB_BODIES); docstrings stay."""
    names, methods = _split_names(names)
    stub_body = STUB_BODIES[kind]

    def stubbed(fn: cst.FunctionDef) -> cst.FunctionDef:
        body = cst.parse_module(stub_body).body
        first = fn.body.body[0] if isinstance(fn.body, cst.IndentedBlock) else None
        doc = (
            [first]
            if first is not None
            and m.matches(first, m.SimpleStatementLine([m.Expr(m.SimpleString())]))
            else []
        )
        return fn.with_changes(body=cst.IndentedBlock(body=[*doc, *body]))

    module = _parsed(source)
    body = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in names:
            stmt = stubbed(stmt)
        elif isinstance(stmt, cst.ClassDef) and stmt.name.value in names | set(methods):
            wanted = methods.get(stmt.name.value)
            members = [
                stubbed(s)
                if isinstance(s, cst.FunctionDef) and (wanted is None or s.name.value in wanted)
                else s
                for s in stmt.body.body
            ]
            stmt = stmt.with_changes(body=stmt.body.with_changes(body=members))
        body.append(stmt)
    return module.with_changes(body=body).code

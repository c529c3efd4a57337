"""The kept tests a deletion can change, found without running anything.

After a deletion the rest of the package no longer refers to the deleted names (the slicer
proposes only definitions no other package code uses, and the deletion removes their
imports), so a test's outcome can change only when it runs deleted code or names a
deleted name itself. Counted as affected:

- every kept test that ran a line of the feature at the baseline (the coverage map);
- every kept test whose own top-level definition in its test file (the test function, or
  its class together with the same file's classes it derives from) holds a deleted name;
- every kept test of a file whose code outside its tests holds a deleted name (imports,
  module-level helpers and fixtures), of a file that does not parse, and, when a conftest
  or test helper holds one, every kept test.

A name "held" is a substring of the text, as in the canary check before: conservative
(`sample` also matches `resample`). Not found: tests reached only by dynamic lookups
(`getattr` with a computed string, iterating `dir(module)`), and tests whose outcome
depends on what earlier tests in the same process did (a test consuming global random
state); so the candidate pipeline runs only its canary run on these tests, and every test
file when one of them fails there. `Settings(test_subsets=False)` runs every file always.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from etude.synth.discover import Repo
from etude.synth.task import first_line


def _top_name(nodeid: str) -> str:
    """The top-level definition a node id belongs to: 'f.py::TestX::test_y[1]' -> 'TestX'."""
    return nodeid.split("::")[1].split("[")[0] if "::" in nodeid else ""


# Lines as `ast` numbers them (ends: \r\n, \r or \n; a form feed is no line break).
_AST_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _segment(lines: list[str], node: ast.stmt) -> str:
    """`ast.get_source_segment(source, node)` from the source's lines split once (the
    standard function splits the whole source again on every call: seconds on a
    6000-line test module with many module-level statements)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset : node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset :].decode()
    tail = lines[last].encode()[: node.end_col_offset].decode()
    return "".join([head, *lines[first + 1 : last], tail])


def _definition_texts(source: str) -> tuple[str, dict[str, str]]:
    """(text outside the top-level definitions, {name: text of the definition together
    with the same file's classes it derives from, transitively})."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    ast_lines = _AST_LINE.findall(source)
    own, bases, outside = {}, {}, []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = first_line(node)
            own[node.name] = "".join(lines[first - 1 : node.end_lineno])
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
        else:
            outside.append(_segment(ast_lines, node))

    def with_bases(name: str, seen: frozenset[str] = frozenset()) -> str:
        parts = [own[name]]
        for base in bases.get(name, []):
            if base in own and base not in seen:
                parts.append(with_bases(base, seen | {name}))
        return "\n".join(parts)

    return "\n".join(outside), {name: with_bases(name) for name in own}


def affected_tests(
    repo: Repo, kept: Iterable[str], ran_feature: Iterable[str], names: Iterable[str]
) -> set[str]:
    """The node ids of `kept` that deleting `names` can change (see the module docstring);
    `ran_feature` are the tests that ran the feature at the baseline."""
    kept, names = list(kept), [n for n in names if n]
    held = lambda text: any(name in text for name in names)  # noqa: E731
    if any(held((repo.root / rel).read_text(errors="replace")) for rel in repo.test_support):
        return set(kept)
    found = set(ran_feature) & set(kept)
    by_file: dict[str, list[str]] = {}
    for nodeid in kept:
        by_file.setdefault(nodeid.split("::", 1)[0], []).append(nodeid)
    for rel, nodeids in by_file.items():
        source = (Path(repo.root) / rel).read_text(errors="replace")
        if not held(source):
            continue
        try:
            outside, definitions = _definition_texts(source)
        except SyntaxError:
            found.update(nodeids)
            continue
        if held(outside):
            found.update(nodeids)
            continue
        found.update(t for t in nodeids if held(definitions.get(_top_name(t), source)))
    return found

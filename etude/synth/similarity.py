"""Whether deleted code is a near copy of code that remains (the task would be copyable).

Code is compared as normalized token sequences: comments, docstrings and layout dropped,
every literal replaced by its type, the definition's own name replaced by a placeholder;
other names are kept. Units are functions and methods (a deleted class contributes its
methods). A deleted unit is copied when some remaining unit's sequence matches it with a
`difflib` ratio of at least the threshold; the deletion is a near copy when copied units
hold at least half of the deleted tokens.
"""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
from dataclasses import dataclass

MIN_TOKENS = 12  # shorter units (accessors, one-line returns) look alike without being copies
_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}


@dataclass(frozen=True)
class Unit:
    """A function or method: `name` as 'f' or 'Class.f', `tokens` normalized."""

    name: str
    tokens: tuple[str, ...]


def _normalized(segment: str, own_name: str) -> tuple[str, ...]:
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(segment).readline):
        if tok.type in _SKIPPED or tok.type == tokenize.ENDMARKER:
            continue
        if tok.type == tokenize.STRING:
            out.append("<str>")
        elif tok.type == tokenize.NUMBER:
            out.append("<num>")
        elif tok.type == tokenize.NAME and tok.string == own_name:
            out.append("<self-name>")
        else:
            out.append(tok.string)
    return tuple(out)


def _without_docstring(node: ast.AST) -> ast.AST:
    body = getattr(node, "body", [])
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
        node.body = body[1:] or [ast.Pass()]
    return node


def units(source: str, names: set[str] | None = None) -> list[Unit]:
    """The functions and methods of `source` (only those in `names`, given as 'f', 'Class'
    or 'Class.f', when given; a class name selects all its methods)."""
    found = []
    for top in ast.parse(source).body:
        if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef):
            members = [(top.name, top)]
        elif isinstance(top, ast.ClassDef):
            members = [
                (f"{top.name}.{n.name}", n)
                for n in top.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
        else:
            continue
        for name, node in members:
            if names is not None and not {name, name.split(".")[0]} & names:
                continue
            code = ast.unparse(_without_docstring(node))
            tokens = _normalized(code, node.name)
            if len(tokens) >= MIN_TOKENS:
                found.append(Unit(name, tokens))
    return found


def best_match(unit: Unit, others: list[Unit], floor: float = 0.0) -> tuple[float, str]:
    """The highest similarity ratio of `unit` to any of `others` and that one's name,
    when it is at least `floor`; (0.0, '') otherwise. Others whose upper bounds (the
    length ratio, then difflib's quick_ratio) are below `floor` or the best so far are
    not compared in full: on a whole deleted module, most pairs never build a matcher."""
    best, name = 0.0, ""
    for other in others:
        lengths = len(unit.tokens) + len(other.tokens)
        shortest = min(len(unit.tokens), len(other.tokens))
        bound = 2.0 * shortest / lengths if lengths else 1.0  # SequenceMatcher.real_quick_ratio
        if bound < floor or bound <= best:
            continue
        matcher = difflib.SequenceMatcher(None, unit.tokens, other.tokens, autojunk=False)
        bound = matcher.quick_ratio()
        if bound < floor or bound <= best:
            continue
        ratio = matcher.ratio()
        if ratio > best:
            best, name = ratio, other.name
    return (best, name) if best >= floor else (0.0, "")


def near_copy(
    deleted: list[Unit], remaining: list[Unit], threshold: float
) -> tuple[float, list[str]]:
    """(share of deleted tokens in copied units, 'deleted ~ remaining (ratio)' per copy)."""
    total = sum(len(u.tokens) for u in deleted)
    copied, pairs = 0, []
    for unit in deleted:
        ratio, name = best_match(unit, remaining, threshold)
        if ratio >= threshold:
            copied += len(unit.tokens)
            pairs.append(f"{unit.name} ~ {name} ({ratio:.2f})")
    return (copied / total if total else 0.0), pairs

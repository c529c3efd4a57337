"""The package layout: library packages never import applications (`etude.recipes`), checked
by walking every module's syntax tree (imports inside functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

import etude

ROOT = Path(etude.__file__).parent
LIBRARIES = ("envs", "models", "monitor", "optim", "parallel", "rl", "sandbox", "serving", "synth")
APPLICATIONS = ("etude.recipes",)


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, module) for every import in `source`, a module of `package`; relative imports
    resolved, and `from a import b` counted as both `a` and `a.b`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def recipe_imports(source: str, package: str) -> list[str]:
    return [m for _, m in imported_modules(source, package) if m.startswith(APPLICATIONS)]


def test_no_library_package_imports_a_recipe():
    offenders = []
    for lib in LIBRARIES:
        for path in sorted((ROOT / lib).rglob("*.py")):
            package = ".".join(path.relative_to(ROOT.parent).parent.parts)
            for module in recipe_imports(path.read_text(), package):
                offenders.append(f"{path.relative_to(ROOT.parent)} imports {module}")
    assert offenders == []


def test_the_walk_finds_nested_and_relative_imports():
    nested = "def f():\n    from etude.recipes.toolgrid import train\n"
    assert recipe_imports(nested, "etude.rl") == [
        "etude.recipes.toolgrid",
        "etude.recipes.toolgrid.train",
    ]
    assert recipe_imports("from ..recipes import cli\n", "etude.rl") == [
        "etude.recipes",
        "etude.recipes.cli",
    ]
    assert recipe_imports("import etude.recipes.coding.loop\n", "etude.envs") == [
        "etude.recipes.coding.loop"
    ]
    assert recipe_imports("from etude.rl import loss\n", "etude.envs") == []

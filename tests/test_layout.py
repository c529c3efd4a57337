"""The package layout: library packages never import applications (the recipes, `etude demo`,
the command line), checked by walking every module's syntax tree (imports inside functions
included)."""

from __future__ import annotations

import ast
from pathlib import Path

import etude

ROOT = Path(etude.__file__).parent
LIBRARIES = ("envs", "models", "monitor", "optim", "parallel", "rl", "sandbox", "serving", "synth")
APPLICATIONS = ("etude.recipes", "etude.demo", "etude.cli", "etude.__main__")


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


def application_imports(source: str, package: str) -> list[str]:
    """The modules of an application package that `source` (a module of `package`) imports."""
    return [
        m
        for _, m in imported_modules(source, package)
        if any(m == app or m.startswith(app + ".") for app in APPLICATIONS)
    ]


def test_no_library_package_imports_an_application():
    offenders = []
    for lib in LIBRARIES:
        for path in sorted((ROOT / lib).rglob("*.py")):
            package = ".".join(path.relative_to(ROOT.parent).parent.parts)
            for module in application_imports(path.read_text(), package):
                offenders.append(f"{path.relative_to(ROOT.parent)} imports {module}")
    assert offenders == []


def test_the_walk_finds_nested_and_relative_imports():
    nested = "def f():\n    from etude.recipes.toolgrid import train\n"
    assert application_imports(nested, "etude.rl") == [
        "etude.recipes.toolgrid",
        "etude.recipes.toolgrid.train",
    ]
    assert application_imports("from ..recipes import cli\n", "etude.rl") == [
        "etude.recipes",
        "etude.recipes.cli",
    ]
    assert application_imports("import etude.recipes.coding.loop\n", "etude.envs") == [
        "etude.recipes.coding.loop"
    ]
    assert application_imports("from etude.rl import loss\n", "etude.envs") == []


def test_the_walk_finds_the_demo_and_the_command_line():
    assert application_imports("from etude.demo import DemoSection\n", "etude.monitor") == [
        "etude.demo",
        "etude.demo.DemoSection",
    ]
    assert application_imports("from ..demo.section import DemoSection\n", "etude.optim") == [
        "etude.demo.section",
        "etude.demo.section.DemoSection",
    ]
    assert application_imports("def f():\n    import etude.cli\n", "etude.synth") == ["etude.cli"]
    # a library module whose name starts like an application's is not one
    assert application_imports("import etude.demography\n", "etude.rl") == []


def test_every_package_is_a_library_or_an_application():
    """A new package must be placed on one side, so the check above covers it."""
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    applications = {a.removeprefix("etude.") for a in APPLICATIONS}
    assert packages - set(LIBRARIES) - applications == set()

"""`etude demo`: a miniature run of every part, written up as one HTML report.

This package is an application: it imports the library packages, none of them imports it.
Each part's section is a function `run(out_dir: Path) -> DemoSection` that does a small real
run (minutes at most on 2 CPU cores) inside `out_dir` and says what it showed: the library
parts' sections are the modules here (synth, monitor, muon, dual_mesh), each recipe's lives
with the recipe (`etude/recipes/*/demo.py`). `run_demo` calls them in order, shows progress,
and writes `report.html` and `report.json`.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from rich.console import Console

from etude.demo.section import DemoSection

__all__ = ["DemoSection", "run_demo"]


def _sections() -> list[tuple[str, Callable[[Path], DemoSection]]]:
    from etude.demo.dual_mesh import run as dual_mesh
    from etude.demo.monitor import run as monitor
    from etude.demo.muon import run as muon
    from etude.demo.synth import run as synth
    from etude.recipes.coding.demo import run as coding_loop
    from etude.recipes.toolgrid.demo import run as textual_feedback

    return [
        ("feature-deletion tasks", synth),
        ("targeted textual feedback", textual_feedback),
        ("coding-agent loop", coding_loop),
        ("monitor", monitor),
        ("sharded Muon", muon),
        ("dual-mesh HSDP", dual_mesh),
    ]


def run_demo(out: str) -> int:
    """Run every part's miniature into `out`; returns the process exit code."""
    console = Console()
    out_dir = Path(out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = []
    failures = 0
    for name, run in _sections():
        console.rule(f"[bold]{name}")
        part_dir = out_dir / name.replace(" ", "-")
        part_dir.mkdir(exist_ok=True)
        start = time.perf_counter()
        try:
            section = run(part_dir)
        except Exception as err:  # one part failing must not hide the others' results
            failures += 1
            section = DemoSection(title=name, summary=f"FAILED: {type(err).__name__}: {err}")
            console.print_exception()
        section.seconds = round(time.perf_counter() - start, 1)
        sections.append(section)
        console.print(section.summary)
        for key, value in section.figures.items():
            console.print(f"  {key}: {value}")
    (out_dir / "report.json").write_text(json.dumps([asdict(s) for s in sections], indent=2))
    report = out_dir / "report.html"
    report.write_text(_render(sections))
    console.rule()
    console.print(f"report: {report}")
    return 1 if failures else 0


def _render(sections: list[DemoSection]) -> str:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>etude demo</title>",
        "<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .6rem}"
        "</style></head><body><h1>etude demo</h1>",
    ]
    for s in sections:
        parts.append(f"<h2>{html.escape(s.title)}</h2><p>{html.escape(s.summary)}</p>")
        parts.append(f"<p><small>{s.seconds} s</small></p>")
        if s.figures:
            rows = "".join(
                f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                for k, v in s.figures.items()
            )
            parts.append(f"<table>{rows}</table>")
        parts.append(s.html)
        for f in s.files:
            parts.append(f"<p><a href='{html.escape(f)}'>{html.escape(f)}</a></p>")
    parts.append("</body></html>")
    return "\n".join(parts)

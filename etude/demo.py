"""`etude demo`: a miniature run of every part, written up as one HTML report.

Each part contributes a function `run(out_dir: Path) -> DemoSection` that does a small real
run (minutes at most on 2 CPU cores) inside `out_dir` and says what it showed. The demo
calls them in order, shows progress, and writes `report.html` and `report.json`.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console


@dataclass
class DemoSection:
    """What one part's miniature run showed.

    `figures` are name -> value pairs shown as a table; `html` is an optional fragment
    (plots as inline images, extra tables); `files` are paths relative to the demo directory.
    """

    title: str
    summary: str
    figures: dict[str, str | float | int] = field(default_factory=dict)
    html: str = ""
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _sections() -> list[tuple[str, Callable[[Path], DemoSection]]]:
    from etude.monitor.demo import run as monitor
    from etude.optim.muon_demo import run as muon
    from etude.parallel.demo import run as dual_mesh
    from etude.recipes.coding.demo import run as coding_loop
    from etude.recipes.toolgrid.demo import run as textual_feedback
    from etude.synth.demo import run as synth

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
